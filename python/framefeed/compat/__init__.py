"""Drop-in replacements for other video readers' Python APIs, on framefeed's engine.

- :mod:`framefeed.compat.decord`: ``import framefeed.compat.decord as decord`` runs code written for decord 0.6
  (``VideoReader``, ``cpu``/``gpu``, ``bridge.set_bridge``, ``DECORDError``) unchanged.
"""
