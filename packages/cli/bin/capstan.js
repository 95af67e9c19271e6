#!/usr/bin/env node
// The `capstan` command: runs the built CLI (dist/main.js); `npm run build -w @capstan/cli` builds it.
import "../dist/main.js";
