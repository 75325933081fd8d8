// The server's JSON API: one call, errors as exceptions with the server's own message.

export async function api(method, path, body) {
  const r = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: text }; }
  if (!r.ok) {
    const e = new Error((data && data.error) || `${r.status} ${r.statusText}`);
    e.status = r.status;
    throw e;
  }
  return data;
}

// The session's own path under /api/sessions.
export const sessionPath = (id, rest = "") => `/api/sessions/${encodeURIComponent(id)}${rest}`;
