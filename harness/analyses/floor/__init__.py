"""The floor analysis: each encoder's gain over the floor or its chance level (`gains`), its
records (`results`) and report section (`report`); `analysis.FloorAnalysis` is what the runner
calls.
"""
