// Legacy JSON/JSONL import (in progress).
export {};
