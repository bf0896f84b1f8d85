"""Packaging for v2s-harness: the `harness` core and first-party plugins as `harness_plugins`."""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent
about: dict[str, str] = {}
exec((HERE / "harness" / "__init__.py").read_text(), about)  # reads __version__ without importing

setup(
    name="v2s-harness",
    version=about["__version__"],
    description="Evaluate sentence encoders by regenerating sentences from their vectors (Vec2Sent).",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    # First-party plugins live in plugins/ but install as `harness_plugins`, a name that cannot
    # collide with another distribution's top-level `plugins` package.
    packages=[
        "harness",
        "harness.training",
        "harness.generation",
        "harness.stages",
        "harness_plugins",
        "harness_plugins.encoders",
        "harness_plugins.decoders",
        "harness_plugins.metrics",
    ],
    package_dir={"harness_plugins": "plugins"},
    install_requires=[
        "click>=8.1",
        "pluggy>=1.3",
        "pyyaml>=6.0",
        "pydantic>=2.5",
        "numpy>=1.24",
        "scipy>=1.10",
        "torch>=2.1",
        "sentencepiece>=0.1.99",
        "fasttext>=0.9.2",
        "sacrebleu>=2.3",
        "safetensors>=0.4",
        "filelock>=3.12",
        "platformdirs>=3.0",
        "tqdm>=4.60",
    ],
    extras_require={
        "test": ["pytest>=7.4", "ruff>=0.4"],
    },
    entry_points={
        "console_scripts": ["harness = harness.cli:main"],
        # The same group third-party plugins use: first-party plugins get no special path.
        "harness": [
            "harness-encoders = harness_plugins.encoders",
            "harness-decoders = harness_plugins.decoders",
            "harness-metrics = harness_plugins.metrics",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
