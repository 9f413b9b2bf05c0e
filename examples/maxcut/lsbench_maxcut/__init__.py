"""Max-Cut for lsbench, from outside lsbench: `pip install -e examples/maxcut` registers it."""
