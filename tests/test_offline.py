"""The package imports and checks with the network disabled, and never fetches NLTK data."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_import_and_check_without_network() -> None:
    code = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise RuntimeError("network access attempted")

        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse

        import nltk
        nltk.download = refuse

        from ground_integrations import GroundednessChecker
        r = GroundednessChecker().check(
            ["Mauna Kea is an inactive volcano. Its peak is 4,207.3 m above sea level."],
            "Mauna Kea is 5,207.3 meters tall.",
        )
        print(r.verdict.value)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "", "NLTK_DATA": "/nonexistent", "HOME": "/nonexistent"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "notGrounded"


def test_top_level_import_is_light() -> None:
    code = "import sys, ground_integrations; print(sorted(m for m in ('nltk', 'langchain_core', 'llama_index', 'torch') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
