#!/usr/bin/env bash
# make demo (placeholder until bbrtrace lands): see README.
echo "demo: not yet"
