/**
 * The one style sheet of every page, themed by the custom properties of theme.ts. Muted tones are
 * mixed from the owner's text and background colors, so that any theme stays coherent.
 */
export const BASE_STYLES = `
*,*::before,*::after{box-sizing:border-box}
:root{--input-radius:8px;--btn-radius:8px;--muted:color-mix(in srgb,var(--text) 72%,var(--bg));--line:color-mix(in srgb,var(--text) 28%,var(--bg));--soft:color-mix(in srgb,var(--text) 4%,var(--bg));--error:#b91c1c}
html{-webkit-text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);font:16px/1.55 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;overflow-wrap:anywhere}
.page{min-height:100vh;display:flex;flex-direction:column;align-items:center;padding:48px 16px 24px}
.card{width:100%;max-width:720px;background:var(--bg);border:1px solid color-mix(in srgb,var(--text) 12%,var(--bg));border-radius:16px;box-shadow:0 1px 2px rgb(0 0 0/.04),0 12px 32px -12px rgb(0 0 0/.18);overflow:hidden}
.full .card{max-width:none;border:0;border-radius:0;box-shadow:none}
.full.page{padding:0;align-items:stretch}
.full .inner{max-width:760px;margin:0 auto}
.inner{padding:40px 48px}
.cover{display:block;width:100%;max-height:260px;object-fit:cover}
.logo{display:block;height:56px;width:auto;max-width:60%;object-fit:contain;margin:0 0 20px}
h1{font-size:1.75rem;line-height:1.25;letter-spacing:-.02em;margin:0 0 8px;font-weight:700}
h2{font-size:1.2rem;line-height:1.3;margin:0 0 4px;font-weight:650}
.lead{color:var(--muted);margin:0 0 8px;white-space:pre-line}
.fields{display:flex;flex-direction:column;gap:24px;margin-top:28px}
.step{display:flex;flex-direction:column;gap:24px;border:0;margin:0;padding:0}
.step+.step{border-top:1px solid var(--line);padding-top:24px}
.js .step+.step{border-top:0;padding-top:0}
.field{display:flex;flex-direction:column;gap:6px;border:0;margin:0;padding:0;min-width:0}
.field[hidden],[hidden]{display:none!important}
.label,legend{font-weight:600;padding:0;margin:0 0 2px}
.req{color:var(--error);margin-left:2px}
.hint{color:var(--muted);font-size:.92rem;margin:0;white-space:pre-line}
.heading{margin-top:8px}
input,select,textarea{font:inherit;color:var(--text);background:var(--bg);width:100%;padding:10px 14px;border:1px solid var(--line);border-radius:var(--input-radius);transition:border-color .15s,box-shadow .15s}
textarea{min-height:120px;resize:vertical;border-radius:min(var(--input-radius),18px)}
select{appearance:none;background-image:linear-gradient(45deg,transparent 50%,var(--muted) 50%),linear-gradient(135deg,var(--muted) 50%,transparent 50%);background-position:calc(100% - 20px) 50%,calc(100% - 15px) 50%;background-size:5px 5px;background-repeat:no-repeat;padding-right:40px}
input:hover,select:hover,textarea:hover{border-color:color-mix(in srgb,var(--text) 50%,var(--bg))}
:focus-visible{outline:3px solid color-mix(in srgb,var(--accent) 55%,transparent);outline-offset:2px}
input:focus-visible,select:focus-visible,textarea:focus-visible{outline:0;border-color:var(--accent);box-shadow:0 0 0 3px color-mix(in srgb,var(--accent) 30%,transparent)}
[aria-invalid=true]{border-color:var(--error)}
.choices{display:flex;flex-direction:column;gap:8px}
.choice{display:flex;align-items:center;gap:10px;padding:10px 14px;border:1px solid var(--line);border-radius:var(--input-radius);cursor:pointer}
.choice:has(:checked){border-color:var(--accent);background:color-mix(in srgb,var(--accent) 7%,var(--bg))}
.choice input{width:18px;height:18px;margin:0;padding:0;accent-color:var(--accent);flex:none}
.choice:has(:focus-visible){box-shadow:0 0 0 3px color-mix(in srgb,var(--accent) 30%,transparent)}
.choice input:focus-visible{outline:0}
.scale{display:flex;flex-wrap:wrap;gap:8px}
.scale .choice{flex:1 0 44px;justify-content:center;padding:10px 0;position:relative;font-weight:600}
.scale .choice:has(:checked){background:var(--accent);border-color:var(--accent);color:var(--bg)}.scale .choice input{position:absolute;opacity:0;inset:0;width:100%;height:100%;cursor:pointer}
.ends{display:flex;justify-content:space-between;color:var(--muted);font-size:.88rem}
input[type=range]{padding:0;border:0;accent-color:var(--accent);height:32px}
input[type=file]{padding:12px;border-style:dashed}
.error{color:var(--error);font-size:.9rem;font-weight:500;margin:0}
.error:empty{display:none}
.actions{display:flex;gap:12px;align-items:center;margin-top:8px;flex-wrap:wrap}
.button{display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:600;padding:12px 24px;min-height:48px;border:1px solid transparent;border-radius:var(--btn-radius);background:var(--btn-bg);color:var(--btn-text);cursor:pointer;text-decoration:none}
.button:hover{filter:brightness(1.08)}
.button:disabled{opacity:.6;cursor:progress}
.secondary{background:transparent;color:var(--text);border-color:var(--line)}
.notice{padding:14px 16px;border:1px solid var(--line);border-radius:var(--input-radius);background:var(--soft);margin:0}
.summary{border:1px solid var(--error);border-radius:var(--input-radius);padding:12px 16px;margin:24px 0 0;color:var(--error);font-weight:500}
progress{width:100%;height:8px;accent-color:var(--accent)}
.stepper{color:var(--muted);font-size:.85rem;font-weight:600;letter-spacing:.04em;text-transform:uppercase;margin:0 0 -8px}
.trap{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
.brand{margin:24px 0 0;text-align:center;font-size:.85rem}
.brand a{color:var(--muted);text-decoration:none;padding:4px 10px;border-radius:999px}
.brand a:hover{text-decoration:underline}
.message{text-align:center;padding:56px 48px}
.message p{white-space:pre-line;color:var(--muted);margin:0 auto 8px;max-width:32rem}
.message .button{margin-top:20px}
.mark{width:56px;height:56px;border-radius:50%;display:grid;place-items:center;margin:0 auto 20px;background:var(--soft);font-size:28px}
@media (max-width:600px){.page{padding:0}.card{border:0;border-radius:0;box-shadow:none}.inner{padding:28px 20px}.message{padding:64px 20px}h1{font-size:1.5rem}.actions .button{flex:1}}
`
  .replace(/\n/g, "")
  .trim();
