"""Runs code in llm-analysis' own virtual environment (it pins old transformers / huggingface-hub releases)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parent / ".venv-llm-analysis"
VERSION = "0.2.2"


def run(code: str):
    """The JSON object that ``code`` prints last, run with llm-analysis installed (created on first use)."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"llm-analysis=={VERSION}"], check=True)
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])
