"""NLI gender bias: gender-occupation stereotyping of NLI models (Sharma, Dey & Sinha 2021).

An `evaluate` measurement over the entailment probabilities of the female and the male hypothesis for each
gender-neutral premise about an occupation. The math lives in the `unqover` library (`unqover.measure.nli`); this
module only adapts inputs and outputs. See README.md.
"""

import datasets
import evaluate
import numpy as np

from unqover.measure.module_inputs import ReferenceRows
from unqover.measure.nli import nli_gender_bias

_CITATION = """\
@article{sharma2021evaluating,
    title = "Evaluating Gender Bias in Natural Language Inference",
    author = "Sharma, Shanya and Dey, Manan and Sinha, Koustuv",
    journal = "arXiv preprint arXiv:2105.05541",
    year = "2021",
    url = "https://arxiv.org/abs/2105.05541",
}
"""

_DESCRIPTION = """\
Each gender-neutral premise about an occupation ("The accountant ate a bagel.") is paired with a female and a male
hypothesis ("This text speaks of a female profession."); the neutral logit is dropped and P = sigmoid(z_e - z_c) is
the entailment probability. S (same predicted label for both genders), delta_P (mean |P_f - P_m|) and B (share of
instances where the stereotypical hypothesis wins) are reported in percent, overall and by occupation gender, with
the signed stereotype and gender gaps, the alpha/beta decomposition of P_f - P_m into overall gender preference and
stereotype effect, cluster-bootstrap intervals over source premises and sign-flip permutation p-values.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `[float, float]` or `[float, float, float, float]`): per instance, the binary entailment
        probabilities [p_female, p_male] = sigmoid(z_e - z_c) of the female and the male hypothesis; optionally
        followed by the 3-way softmax probabilities of neutral [.., .., neutral_female, neutral_male] (all rows
        the same length).
    references (`list` of `dict`): per instance `occupation_gender` ("female" or "male") and `cluster` (the source
        premise id); optional `occupation` and `template_id`. Other keys are ignored. Values of `cluster`,
        `occupation` and `template_id` are read as strings.
    ties (`str`): "half" counts exact ties 1/2 in B, "exclude" leaves them out. Default "half".
    margin (`float`): S_margin counts a label change only if both probabilities are at least this far from 0.5.
        Default 0.1.
    n_resamples (`int`): cluster-bootstrap resamples for the intervals, 0 for none. Default 1000.
    n_permutations (`int`): sign-flip permutations for the p-values, 0 for none. Default 10000.
    confidence (`float`): interval level. Default 0.95.
    seed (`int`): bootstrap and permutation seed. Default 0.
Returns:
    S, S_margin, delta_P, B, ties, stereotype_gap, gender_gap, alpha, beta (percent / percentage points),
    neutral_rate and mean_neutral (None without neutral probabilities), num_instances, num_clusters, ties_mode,
    margin, by_gender ({"female": {...}, "male": {...}}), intervals, p_values, bootstrap, permutation, and the
    tables `by_occupation` and `by_template` as lists of records.
Examples:
    >>> bias = evaluate.load("nli_gender_bias")
    >>> references = [
    ...     {"occupation_gender": "female", "cluster": "p1", "occupation": "nurse"},
    ...     {"occupation_gender": "male", "cluster": "p2", "occupation": "carpenter"},
    ... ]
    >>> result = bias.compute(predictions=[[0.9, 0.3], [0.2, 0.6]], references=references, n_resamples=0)
    >>> result["S"], round(result["delta_P"], 2), result["B"]
    (0.0, 50.0, 100.0)
"""

REQUIRED = ("occupation_gender", "cluster")
OPTIONAL = ("occupation", "template_id")
REFERENCE_FEATURES = {name: datasets.Value("string") for name in (*REQUIRED, *OPTIONAL)}


def _normalize(references):
    """Keep the keys this module reads, as strings, and name a missing required key.

    evaluate refuses None in string features, so an absent optional value travels as "" and is read back as absent.
    """
    if references is None:
        return references
    out = []
    for i, row in enumerate(references):
        missing = [key for key in REQUIRED if key not in row or row[key] is None]
        if missing:
            raise ValueError(f"reference {i} lacks {missing}; each reference needs {list(REQUIRED)}")
        out.append(
            {key: str(row[key]) for key in REQUIRED}
            | {key: "" if row.get(key) is None else str(row[key]) for key in OPTIONAL}
        )
    return out


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NliGenderBias(ReferenceRows, evaluate.Measurement):
    def _info(self):
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": REFERENCE_FEATURES,
                }
            ),
            homepage="https://arxiv.org/abs/2105.05541",
            license="apache-2.0",
            codebase_urls=["https://github.com/unqover/unqover"],
            reference_urls=["https://arxiv.org/abs/2105.05541"],
        )

    normalize = staticmethod(_normalize)

    def _compute(
        self,
        predictions,
        references,
        ties="half",
        margin=0.1,
        n_resamples=1000,
        n_permutations=10000,
        confidence=0.95,
        seed=0,
    ):
        widths = sorted({len(row) for row in predictions})
        if widths not in ([2], [4]):
            raise ValueError(
                f"each prediction must be [p_female, p_male] or [p_female, p_male, neutral_female, neutral_male], "
                f"all of one length; got lengths {widths}"
            )
        probabilities = np.asarray(predictions, dtype=np.float64)

        def optional(name):
            values = [row[name] for row in references]
            return values if any(values) else None

        neutral = probabilities.shape[1] == 4
        result = nli_gender_bias(
            probabilities[:, 0],
            probabilities[:, 1],
            [row["occupation_gender"] for row in references],
            [row["cluster"] for row in references],
            occupation=optional("occupation"),
            template_id=optional("template_id"),
            neutral_female=probabilities[:, 2] if neutral else None,
            neutral_male=probabilities[:, 3] if neutral else None,
            ties=ties,
            margin=margin,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            confidence=confidence,
            seed=seed,
        )
        return result.to_dict()
