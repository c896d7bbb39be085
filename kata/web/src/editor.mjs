// The practice room's code editor: one function, KataEditor.create, on window.
// Built into ../static/editor.js by build.mjs (`npm install && npm run build` here).
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "13.5px" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", lineHeight: "1.45" },
  ".cm-gutters": { backgroundColor: "#f6f7f9", borderRight: "1px solid #e3e6ea", color: "#8a919a" },
  ".cm-activeLineGutter": { backgroundColor: "#e9edf2" },
});

// create({parent, doc, onSave, onChange}) -> {getText, setText, focus, view}
// onSave(): Ctrl-S / Cmd-S; onChange(text): every edit of the learner (not setText's).
function create({ parent, doc = "", onSave = () => {}, onChange = () => {} }) {
  let quiet = false;
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        keymap.of([
          { key: "Mod-s", preventDefault: true, run: () => { onSave(); return true; } },
          indentWithTab,
        ]),
        basicSetup,
        python(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        theme,
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !quiet) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    // the whole text replaced as one edit: Ctrl-Z brings back what was there before
    setText(text) {
      if (text === view.state.doc.toString()) return;
      quiet = true;
      try {
        const head = Math.min(view.state.selection.main.head, text.length);
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: head } });
      } finally {
        quiet = false;
      }
    },
    focus: () => view.focus(),
  };
}

window.KataEditor = { create };
