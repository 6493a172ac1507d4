-- The searches of the search benchmark, shared by search.lua (through the service) and meili-search.lua
-- (Meilisearch asked directly): words found in nearly every call of scripts/bench.d/transcripts.py, in
-- some, and in few or none. Loaded with dofile from the workspace root, where scripts/bench runs wrk.
return {
  "refund", "router", "invoice", "engineer", "password", "delivery", "cancel", "discount",
  "Kowalski", "smartwatch", "retentions", "courier", "supervisor", "printer", "October", "thank",
  "refund router", "engineer Thursday", "invoice twice", "broadband Okafor", "upgrade fibre plan",
  "direct debit", "REF123456", "washing machine", "manager", "expired card", "zebra", "Globex",
}
