"""The resident robust tabu search for QAP (`--algorithm rots --backend gpu-resident`): its host
side (host.py), kernel (kernel.py: device_functions.py and steps.py put together), shapes (plan.py,
shape.py) and compile-time constants (constants.py)."""
