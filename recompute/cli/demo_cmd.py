"""``recompute demo``: the main job on the embedded default, for a newcomer."""

from __future__ import annotations

import sys

import click

from recompute import demo
from recompute.cli import cli


@cli.command("demo")
def demo_command():
    """Prove real go-ethereum state offline and show what a lying node gets."""
    sys.exit(demo.run(click.echo))
