"""The folder ``python -m seam.trace --hook-dir`` prints: put on
``PYTHONPATH``, its ``sitecustomize.py`` installs seam.trace in every Python
process started with ``SEAM_TRACE`` set. Nothing here is imported as
``seam._trace_hook``."""
