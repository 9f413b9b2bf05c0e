"""Each problem's move costs on the device, one module a problem: twins of its CPU definitions, so that
a fix to one problem loads (and stales the figures of) that problem's code alone."""
