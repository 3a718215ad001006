// The turn executor over pi (in progress).
export {};
