"""Validates the service's responses with the `onecodex` client's own response models (pydantic),
so that a client release that requires a new field fails a test rather than a lab's script.

Usage: python validate_models.py RESPONSES.json, where the file maps a collection name
(`samples`, `metadata`, `classifications`, ...) to a list of response objects. Prints one line per
problem and exits 1 if there is any.
"""

import json
import sys

from onecodex import Api


def main(path):
    api = Api(api_key="0" * 32, base_url="http://127.0.0.1:9", load_extensions=False, telemetry=False)
    models = {
        "samples": api.Samples,
        "metadata": api.Metadata,
        "classifications": api.Classifications,
        "analyses": api.Analyses,
        "alignments": api.Alignments,
        "panels": api.Panels,
        "functional_profiles": api.FunctionalProfiles,
        "jobs": api.Jobs,
        "documents": api.Documents,
        "tags": api.Tags,
        "projects": api.Projects,
        "users": api.Users,
    }
    responses = json.load(open(path))
    problems = []
    counted = 0
    for collection, objects in responses.items():
        model = models.get(collection)
        if model is None:
            continue
        for obj in objects:
            counted += 1
            try:
                model.model_validate(obj)
            except Exception as e:  # pydantic's ValidationError, or a TypeError from a validator
                problems.append(f"{collection} {obj.get('$uri')}: {type(e).__name__}: {e}".replace("\n", " | "))
    for p in problems:
        print(p)
    print(f"{counted} responses checked against the onecodex models, {len(problems)} problems", file=sys.stderr)
    return 1 if problems or counted == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
