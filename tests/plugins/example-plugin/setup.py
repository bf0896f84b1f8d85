"""v2s-example-plugin: a complete third-party plugin for v2s-harness, used by its tests.

Installing it (`pip install tests/plugins/example-plugin`) adds the entry point `example` to the
group "harness"; `harness list` then shows the encoders `example-bow` and `example-idf` (trainable),
the metric `example-length`, the analysis `example-length-gap` (with its spec section
`length_gap:` and results field `length_gaps`), the executor `example-processes` and the attack
`example-neighbours`, and `harness --help` the command `harness length-gap`.
"""

from setuptools import setup

setup(
    name="v2s-example-plugin",
    version="0.1.0",
    description="Example v2s-harness plugin: hashed bag-of-words encoders (counts, and tf-idf "
                "fitted on the run's text), a length metric, a length-gap analysis, a "
                "process-pool executor and a nearest-leaked-sentence attack.",
    python_requires=">=3.10",
    packages=["v2s_example_plugin"],
    # numpy and pydantic come with v2s-harness; listing them keeps the dependency explicit.
    install_requires=["v2s-harness", "numpy", "pydantic>=2"],
    entry_points={"harness": ["example = v2s_example_plugin"]},
)
