"""Optional compute backends. `torch_backend` runs the engine's tensors on torch (cpu or cuda);
it is imported only when `backend="torch"` is asked for."""
