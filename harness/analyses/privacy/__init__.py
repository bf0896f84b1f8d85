"""The privacy analysis: its spec section (`spec`, `privacy:`) and its checks (`checks`), the
canaries (`entities` their values and frames, `canaries` the sentences and recovery,
`exposure`, `canary_attack` under one attacker, `canary_floor` the floor's, `canary_report`
their section), the attack on one encoder's vectors (`attack`) and the whole study
(`study`), its records (`results`), report sections and figure (`report`);
`analysis.PrivacyAnalysis` is what the runner calls. The defences are plugins
(`register_defences`), applied by the stage `harness.stages.defend`.
"""
