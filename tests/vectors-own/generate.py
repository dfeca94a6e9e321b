#!/usr/bin/env python3
"""Write this folder's vector-shaped cases. Expectations follow the spec's rules (cited per case), not the reference."""
import base64, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
cases = []

def token(obj):
    raw = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")

def add(kind, name, description, function, inputs, results):
    cid = f"{kind}/{name}"
    os.makedirs(os.path.join(HERE, kind, name), exist_ok=True)
    for file, body in (("input.json", {"function": function, "cases": inputs}), ("expected.json", {"function": function, "results": results})):
        with open(os.path.join(HERE, kind, name, file), "w") as out:
            json.dump(body, out, indent=1, ensure_ascii=False, sort_keys=True)
            out.write("\n")
    cases.append({"id": cid, "kind": kind, "description": description, "inputs": [f"{cid}/input.json"], "expected": f"{cid}/expected.json", "expected_files": []})

# Spec 02 §6.4: trim whitespace and slashes; `topics`/`sources` first segment kept, else `topics/` prepended.
add("fn_path_prefix", "normalize-prefix", "path_prefix normalization", "retrieval.bm25._normalize_path_prefix",
    [" /health/ ", "sources/slack", " / ", "topics", "topics/x/", "notes/a", "/sources/", "", "\ttopicsx/y "],
    ["topics/health", "sources/slack", None, "topics", "topics/x", "topics/notes/a", "sources", None, "topics/topicsx/y"])

# Spec 01 §2.3/§3.5: canonical base64url (no padding) of sorted compact JSON of an accepted shape, else nothing.
current = {"authority_tier": None, "principal_id": "unknown", "speaker_kind": "unknown", "trust_state": "trusted", "version": 1}
owner = {"authority_tier": "owner", "principal_id": "owner", "speaker_kind": "human", "trust_state": "trusted", "version": 1}
legacy = {"origin_scope": {"capabilities": ["memory"], "origin": "local-owner"}, "principal_id": "owner", "speaker_kind": "human", "trust_state": "trusted", "version": 1}
unsorted = base64.urlsafe_b64encode(b'{"version":1,"authority_tier":null,"principal_id":"unknown","speaker_kind":"unknown","trust_state":"trusted"}').decode().rstrip("=")
add("fn_source_metadata", "decode", "source-meta token decoding accepts only canonical tokens", "source_format.decode_source_metadata",
    [token(current), token(owner), token(legacy), token(current) + "=", unsorted, "!!", token(dict(current, version=2)), ""],
    [current, owner, owner, None, None, None, None, None])

# Spec 01 §2.6: label stripped; ` (nid)` suffix gives the display; a label equal to nid has no display;
# the label is `display (nid)`, or nid alone when the display equals it. A non-canonical marker is no speaker.
add("fn_structured_speaker", "strip-and-label", "structured speaker from a v2 frame header label", "retrieval.bm25._structured_speaker",
    [["Alice (u-1) ", "u%2D1"], ["Alice (u-1)\t", "u%2D1"], ["u-1 (u-1)", "u%2D1"], ["u-1 ", "u%2D1"], ["Bob", "7391"], ["x", "u-1"], ["\u3000Carol", "c"]],
    [["u-1", "Alice", "Alice (u-1)"], ["u-1", "Alice", "Alice (u-1)"], ["u-1", "u-1", "u-1"], ["u-1", "", "u-1"], ["7391", "Bob", "Bob (7391)"], None, ["c", "Carol", "Carol (c)"]])

# Spec 02 §6.4 / 01 §6: YYYY, YYYY-MM or YYYY-MM-DD naming a real calendar date (years 1..9999).
add("fn_temporal", "valid-value", "temporal value validity", "markdown.temporal.is_valid_temporal_value",
    ["2024", "2024-02", "2024-02-29", "2023-02-29", "2024-13", "0000", "9999-12-31", "24-01", "2024-1-01", "", " 2024", "2024-00"],
    [True, True, True, False, False, False, True, False, False, False, False, False])

# Spec 02 §6.4: a value expands to a half-open calendar interval.
add("fn_temporal", "bounds", "temporal bounds: first day and the day after the last", "markdown.temporal.temporal_bounds",
    ["2024", "2024-02", "2024-12", "2024-02-29", "2023-12-31", "2023-02-30"],
    [{"ok": True, "value": ["2024-01-01", "2025-01-01"]}, {"ok": True, "value": ["2024-02-01", "2024-03-01"]},
     {"ok": True, "value": ["2024-12-01", "2025-01-01"]}, {"ok": True, "value": ["2024-02-29", "2024-03-01"]},
     {"ok": True, "value": ["2023-12-31", "2024-01-01"]}, {"ok": False}])

# Spec 01 §6.4: definition lines `[^FID]: Time: ...; Sources: ...`; anything else is no definition.
add("fn_definition", "match", "definition line matching", "markdown.syntax.definition_match",
    ["[^e-1]: Time: `2024-03`; Sources: [a](D1:1)", "plain text", "[^e-2]: Time: undated; Sources: [x](D1:2), [y](D1:3)"],
    [{"id": "e-1", "links": [["a", "D1:1"]], "sources": "[a](D1:1)", "time": "2024-03"}, None,
     {"id": "e-2", "links": [["x", "D1:2"], ["y", "D1:3"]], "sources": "[x](D1:2), [y](D1:3)", "time": "undated"}])

# Spec 02 §4.2: no sources means no records and no ids, with or without provenance.
provenance = {"authority_tier": "owner", "origin_id": "sess-1/turn-1", "principal_id": "owner", "speaker_display": "Owner", "speaker_id": "owner/local", "speaker_kind": "human"}
empty = {"ok": True, "value": {"parsed": [], "records": [], "source_ids": {}}}
add("fn_source_identity", "records-empty", "source identity with its parsed and records fields", "management.transaction.source_records",
    [{"provenance": provenance, "sources": []}, {"provenance": None, "sources": None}], [empty, empty])

with open(os.path.join(HERE, "index.json"), "w") as out:
    json.dump({"set": "scriptorium-own", "cases": cases}, out, indent=1, sort_keys=True)
    out.write("\n")
