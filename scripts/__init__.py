"""Command-line entry points, one page each: the work is done by the library they call.

Each module's docstring names its make target and the library module behind it.
"""
