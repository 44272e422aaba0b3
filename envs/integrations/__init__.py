"""Trainer adapters: stillweb environments in the shapes that RL trainers ask for.

Each module here is a thin layer over :class:`~stillweb.envs.wikiqa.env.WikiQAEnv`
(through :class:`~stillweb.envs.integrations.episode.ToolEpisode`) and imports
its trainer's package, which comes with the matching optional extra:

=====================  ==============================  =====================
module                 trainer (package)               extra
=====================  ==============================  =====================
``openenv``            OpenEnv (``openenv-core``)      ``stillweb[openenv]``
``trl``                TRL ``GRPOTrainer`` (``trl``)   ``stillweb[trl]``
``verl``               verl (``verl``)                 ``stillweb[verl]``
``skyrl``              SkyRL-gym (``skyrl-gym``)       ``stillweb[skyrl]``
``verifiers``          verifiers (``verifiers``)       ``stillweb[verifiers]``
=====================  ==============================  =====================

Importing this package imports none of them; only ``episode`` and ``sft`` are
free of trainer dependencies. The MCP server lives with the server wing
(:mod:`stillweb.server.mcp`).
"""
