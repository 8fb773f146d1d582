"""The bundled recipes, one module per registry area; each registers its recipes on import."""
