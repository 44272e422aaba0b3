"""The server wing: everything HTTP over the tools and environments.

Tool routes (:mod:`.tools`), the Search-R1 ``/retrieve`` route (:mod:`.retrieve`),
environment sessions (:mod:`.sessions`) and their store (:mod:`.session_store`),
shared HTTP plumbing and settings (:mod:`.base`), and the app factory (:mod:`.app`).
Layers: corpora -> sandboxes -> envs -> server -> cli.
"""
