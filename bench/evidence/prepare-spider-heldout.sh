#!/usr/bin/env bash
# Copies the Spider-train databases held out of the demo model's pretraining (rlvr pretrain --spider-holdout)
# and their questions next to spider-heldout.json: DEST/spider-heldout/{questions.jsonl,database/<db>/<db>.sqlite}.
# Usage: bash bench/evidence/prepare-spider-heldout.sh [DEST=bench/evidence] [SPIDER=../shared/datasets/spider-train]
set -euo pipefail
DEST=${1:-bench/evidence}
SPIDER=${2:-../shared/datasets/spider-train}
HOLD=train_station,perpetrator,candidate_poll,news_report,railway,coffee_shop,station_weather,protein_institute
mkdir -p "$DEST/spider-heldout/database"
python3 - "$SPIDER" "$DEST/spider-heldout" "$HOLD" <<'PY'
import json, shutil, sys, os
spider, dest, hold = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
n = 0
with open(os.path.join(spider, "questions.jsonl")) as f, open(os.path.join(dest, "questions.jsonl"), "w") as out:
    for line in f:
        q = json.loads(line)
        if q["db_id"] in hold:
            out.write(line if line.endswith("\n") else line + "\n"); n += 1
for db in hold:
    os.makedirs(os.path.join(dest, "database", db), exist_ok=True)
    shutil.copy(os.path.join(spider, "database", db, db + ".sqlite"), os.path.join(dest, "database", db, db + ".sqlite"))
print(f"{n} questions on {len(hold)} databases -> {dest}")
PY
