// The error a Bot API method throws to answer `{ok:false,error_code,description,parameters?}` instead of a
// result ("Bad Request: chat not found"). Owns only the shape; http-front.ts turns it into the JSON answer.

/** An answer Telegram would give instead of a result. */
export class ApiError extends Error {
  readonly code: number;
  readonly retryAfter: number | undefined;
  constructor(code: number, description: string, retryAfter?: number) {
    super(description);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

export function badRequest(description: string): ApiError {
  return new ApiError(400, `Bad Request: ${description}`);
}
