"""The iteration level (the `gpu` backend): the neighbourhood evaluated on the GPU each iteration
(evaluator.py, kernels.py) and PLS's archive in GPU memory (archive.py)."""
