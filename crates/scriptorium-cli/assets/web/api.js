// The JSON routes of `scriptorium serve`. The token travels in the HttpOnly cookie the
// server set when the page was opened as `/?token=…`, so no script ever holds it.

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }
}

// The message of any of the server's error shapes.
function describe(status, body) {
  if (body && typeof body === 'object') {
    const detail = body.detail && typeof body.detail === 'object' ? body.detail : null;
    const error = body.error && typeof body.error === 'object' ? body.error : null;
    const code = (detail && detail.code) || (error && error.code) || body.code;
    const message = (detail && detail.message) || (error && error.message) || body.error || body.message;
    if (message) return code ? `${message} (${code})` : String(message);
  }
  return `the server answered ${status}`;
}

async function call(method, path, value) {
  const init = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}};
  if (value !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(value);
  }
  const response = await fetch(path, init);
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

export const getJson = (path) => call('GET', path);
export const postJson = (path, value) => call('POST', path, value);
export const putJson = (path, value) => call('PUT', path, value);

// `/api/memory/topics/<path>` with each segment escaped.
export function topicUrl(path) {
  return '/api/memory/topics/' + path.split('/').map(encodeURIComponent).join('/');
}

// A query string from the non-empty fields of `params`.
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && String(value).trim() !== '') search.set(key, String(value).trim());
  }
  return search.toString();
}
