"""The ``ground`` command's parts below its entry point (:mod:`ground_integrations.cli`): what
every command shares, the files ``eval`` and ``calibrate`` read and write, and those two
commands."""
