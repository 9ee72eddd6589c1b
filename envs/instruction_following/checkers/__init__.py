"""Checker modules, one per family of instruction ids; importing one registers its checkers.

``ifeval_*``: Google's IFEval (25 ids). ``ifevalg_*``: open-instruct's IFEvalG additions used for
IF-RLVR training (29 ids). ``ifbench_*``: IFBench's out-of-distribution set (58 ids).
"""
