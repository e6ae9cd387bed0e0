"""The passes, in the order they run. A pass is `fn(view, outputs, protected) -> changes made`,
named by `fn.name`; adding one is a module here and a line in PASSES (run in rounds until
nothing changes) or FINAL_PASSES (run once after: the rewrites into TF's fused forms, which
would hide from batch-norm folding the BiasAdd it folds into)."""

from dataclasses import dataclass, field

from graphdef.optimize.passes.batch_norm import fold_batch_norms
from graphdef.optimize.passes.constant_folding import fold_constants
from graphdef.optimize.passes.constants_second import constants_second
from graphdef.optimize.passes.cse import eliminate_common_subexpressions
from graphdef.optimize.passes.fusion import fuse_bias_activations, fuse_bias_activations_for_session
from graphdef.optimize.passes.identity import remove_identities
from graphdef.optimize.passes.pad_folding import fold_pads, fold_pads_for_session
from graphdef.optimize.passes.prune import prune
from graphdef.optimize.passes.residual_fusion import fuse_residual_adds

PASSES = (prune, remove_identities, fold_constants, fold_batch_norms, eliminate_common_subexpressions)
# prune drops the Pads' amounts
FINAL_PASSES = (fuse_bias_activations, fold_pads, prune)
# for a copy only graphdef's Session runs: also depthwise convolutions with their bias (TF runs that
# op only with its oneDNN kernels), residual adds into the convolution before them (TF's kernel has
# no Add), Pads before TF's fused depthwise op (no EXPLICIT in TF), and Consts read second by Mul/Add,
# so the Session may write the product into the other input
SESSION_FINAL_PASSES = (fuse_bias_activations_for_session, fuse_residual_adds, fold_pads_for_session, prune,
                        constants_second)


@dataclass
class Report:
    nodes_before: int
    nodes_after: int = 0
    changes: dict = field(default_factory=dict)   # pass name -> changes over all rounds

    def add(self, name, count):
        self.changes[name] = self.changes.get(name, 0) + count

    def as_dict(self):
        return {"nodes_before": self.nodes_before, "nodes_after": self.nodes_after,
                "passes": {name: count for name, count in self.changes.items() if count}}

    def lines(self):
        done = ", ".join(f"{name} {count}" for name, count in self.changes.items() if count) or "nothing to do"
        return [f"{self.nodes_before} nodes -> {self.nodes_after}: {done}"]
