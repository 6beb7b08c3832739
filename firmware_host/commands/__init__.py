"""Subcommands of the `dicetower` command line.

Each module here exposes ``register(subparsers)``, which adds its subcommand and sets
``func`` to a callable taking the parsed arguments and returning an exit status. Modules
import their heavy dependencies (OpenCV, Flask, gpiozero) inside that callable, so that
``dicetower --help`` and the light commands start fast.
"""
