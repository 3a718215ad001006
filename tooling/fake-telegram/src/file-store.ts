// The files the fake knows by `file_id`: the ones inbound messages carry and the ones the bot uploaded (with
// their bytes), so a later send can reuse an id and getFile can describe it. Owns id assignment and lookup;
// does not own the send methods that create files (file-methods.ts, inbound-messages.ts).
import type { TgFile, TgPhotoSize } from "./types.ts";

interface StoredFile {
  file: TgFile;
  bytes?: Uint8Array;
}

export class FileStore {
  readonly #files = new Map<string, StoredFile>();
  #counter = 0;

  /** A fresh file of `kind` (`photo`, `document`, …) with new ids; `spec` fields override the defaults. */
  newFile(kind: string, spec: Partial<TgFile> = {}, bytes?: Uint8Array): TgFile {
    this.#counter += 1;
    const file: TgFile = {
      file_id: `${kind}-file-${this.#counter}`,
      file_unique_id: `${kind}-unique-${this.#counter}`,
      ...(bytes === undefined ? {} : { file_size: bytes.length }),
      ...spec,
    };
    this.#files.set(file.file_id, bytes === undefined ? { file } : { file, bytes });
    return file;
  }

  /**
   * A photo as Telegram stores one: three sizes (90, 320, 1280 px wide), each a file of its own. Only the
   * largest holds `bytes` (the smaller ones hold a marker), so a test can tell which size was downloaded.
   */
  photoSizes(bytes?: Uint8Array): TgPhotoSize[] {
    return [90, 320, 1280].map((width) => {
      const own =
        bytes === undefined || width === 1280 ? bytes : new TextEncoder().encode(`thumbnail ${width}`);
      const file = this.newFile("photo", {}, own);
      return {
        file_id: file.file_id,
        file_unique_id: file.file_unique_id,
        width,
        height: Math.round((width * 3) / 4),
        file_size: own?.length ?? width * 40,
      };
    });
  }

  has(fileId: string): boolean {
    return this.#files.has(fileId);
  }

  get(fileId: string): TgFile | undefined {
    return this.#files.get(fileId)?.file;
  }

  /** The bytes behind a file id, when the fake has them (uploads, photos pushed with bytes). */
  bytesOf(fileId: string): Uint8Array | undefined {
    return this.#files.get(fileId)?.bytes;
  }
}
