// History limiting and transcript repair (in progress).
export {};
