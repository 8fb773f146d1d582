"""The recipes, trust-critical (the derivations a verdict is drawn from): the framework and
the bundled recipes, one module per registry area; each registers its recipes on import."""
