// Streaming normalisation: reasoning tags, block chunking, reply directives (in progress).
export {};
