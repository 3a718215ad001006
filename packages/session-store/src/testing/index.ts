// The conformance suite every backend passes (in progress).
export {};
