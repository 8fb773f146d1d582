"""``recompute demo``: the main job on the embedded default, for a newcomer."""

from __future__ import annotations

import sys

import click

from recompute.cli import cli, demo


@cli.command("demo")
def demo_command() -> None:
    """Bring the devnet up, prove and re-derive at named moments, show lying views; stop."""
    sys.exit(demo.run(click.echo))
