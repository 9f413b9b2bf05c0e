"""The resident robust tabu search for QAP (`--algorithm rots --backend gpu-resident`): its host
side (host.py), kernel (kernel.py: device_functions.py, steps.py and the problem's adapter,
gpu/adapters/qap_rots.py, put together), shapes (plan.py,
shape.py) and compile-time constants (constants.py)."""
