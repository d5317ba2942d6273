"""wgdem's exceptions. Each carries the one-line message the command-line program prints for
the same fault: the file, the field (or argument) and how to fix it."""


class WgdemError(Exception):
    """Base class of every error wgdem raises."""


class ConfigError(WgdemError, ValueError):
    """An invalid scene, shear configuration, contact case or argument (bad value, shape or
    range), or a checkpoint that cannot be restored (damaged, of another kind or version)."""


class EngineError(WgdemError, RuntimeError):
    """The engine cannot run: no usable GPU adapter, a device lost, a scene beyond the GPU
    engine's limits."""


class BlowUpError(EngineError):
    """Spheres left every state a granular run reaches (a non-finite state or a speed above
    ``simulation.max_speed``); the message names the first sphere and the step."""


class FileError(WgdemError, RuntimeError, OSError):
    """A file or directory cannot be read or written, or an output directory already holds
    results (pass ``overwrite=True``) or is being written by another run."""
