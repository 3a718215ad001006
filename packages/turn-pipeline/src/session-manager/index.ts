// The pi SessionManager adapter over session-store (in progress).
export {};
