"""Evaluator backends on the CPU: who evaluates the neighbourhood each iteration (the iteration
level). Every backend is a `lsbench.interfaces.Evaluator`; lsbench.registry lists all of them by
name (the GPU, COW and grid ones live in `gpu/` and `hpc/`)."""
