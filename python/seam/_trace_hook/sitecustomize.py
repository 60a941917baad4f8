"""seam.trace for every Python process that starts with this folder on
PYTHONPATH and SEAM_TRACE set (``python3 -m seam.trace --hook-dir`` prints
the folder):

    PYTHONPATH=$(python3 -m seam.trace --hook-dir):$PYTHONPATH SEAM_TRACE=/tmp/t \\
        SEAM_TRACE_ENGINE=sglang python3 -m sglang.launch_server ...

It installs nothing else and imports nothing more until torch.distributed
(and the engine's parallel_state) are imported; where the package ``seam``
does not import (an engine's own Python, without seam's native module), the
hook's file is loaded by itself. The sitecustomize this one hides, the next
on sys.path, runs after it. A failure is one line on stderr: the process
runs untraced.
"""
import os
import sys


def _seam_trace_install() -> None:
    if not os.environ.get("SEAM_TRACE"):
        return
    try:
        try:
            import seam.trace as trace
        except Exception:  # noqa: BLE001 - seam's native module is not for this Python: the hook alone
            import importlib.util

            here = os.path.dirname(os.path.abspath(__file__))
            spec = importlib.util.spec_from_file_location("seam.trace", os.path.join(os.path.dirname(here),
                                                                                   "trace.py"))
            trace = importlib.util.module_from_spec(spec)
            sys.modules["seam.trace"] = trace
            spec.loader.exec_module(trace)
        trace.install_from_env()
    except Exception as e:  # noqa: BLE001 - the process runs on, untraced
        sys.stderr.write(f"seam.trace: not tracing this process: {type(e).__name__}: {e}\n")


def _next_sitecustomize() -> None:
    """Runs the sitecustomize this one hides (the next on sys.path), as
    Python would have."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_seam_trace_install()
_next_sitecustomize()
