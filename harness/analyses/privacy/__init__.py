"""The privacy analysis: its spec section (`spec`, `privacy:`) and its checks (`checks`), the
canaries (`entities` their values and frames, `canaries` the sentences and recovery,
`exposure`, `canary_recovery` under one attacker, `canary_floor` the floor's, `canary_report`
their section), one privacy point: the attacker on one set of vectors (`point`) and the spec's
attacks run on them (`attacks`), the whole study (`study`), its records (`results`), report
sections and figure (`report`);
`analysis.PrivacyAnalysis` is what the runner calls. The defences are plugins
(`register_defences`), applied by the stage `harness.stages.defend`.
"""
