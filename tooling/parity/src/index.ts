// The parity harness face (built in issue 10).
export {};
