// StoreSubscription without a browser: a host that calls its controllers as Lit's ReactiveElement
// does (hostConnected, hostUpdated after each update, hostDisconnected), and stores that count
// their listeners, so a leaked or doubled subscription shows as a count, not only as extra renders.
import type { ReactiveController, ReactiveControllerHost } from "lit";
import { assertEquals } from "../../tests/assert.ts";
import { StoreSubscription } from "./store-subscription.ts";

/** An EventTarget that counts the listeners it holds (EventTarget ignores a second identical add). */
class CountingStore extends EventTarget {
  private readonly held = new Set<string>();
  private readonly ids = new Map<unknown, number>();

  private key(type: string, l: unknown): string {
    if (!this.ids.has(l)) this.ids.set(l, this.ids.size);
    return `${type}#${this.ids.get(l)}`;
  }
  override addEventListener(type: string, l: EventListenerOrEventListenerObject | null): void {
    this.held.add(this.key(type, l));
    super.addEventListener(type, l);
  }
  override removeEventListener(type: string, l: EventListenerOrEventListenerObject | null): void {
    this.held.delete(this.key(type, l));
    super.removeEventListener(type, l);
  }
  /** Listeners held now. */
  get listeners(): number {
    return this.held.size;
  }
  emit(type = "change"): void {
    this.dispatchEvent(new Event(type));
  }
}

/** The part of a Lit element the controller sees, with the element's `controller` property. */
class FakeHost implements ReactiveControllerHost {
  controller: CountingStore | null = null;
  updatesRequested = 0;
  private readonly controllers: ReactiveController[] = [];
  private connected = false;

  addController(c: ReactiveController): void {
    this.controllers.push(c);
    if (this.connected) c.hostConnected?.();
  }
  removeController(c: ReactiveController): void {
    this.controllers.splice(this.controllers.indexOf(c), 1);
  }
  requestUpdate(): void {
    this.updatesRequested++;
  }
  get updateComplete(): Promise<boolean> {
    return Promise.resolve(true);
  }
  connect(): void {
    this.connected = true;
    for (const c of this.controllers) c.hostConnected?.();
  }
  disconnect(): void {
    this.connected = false;
    for (const c of this.controllers) c.hostDisconnected?.();
  }
  /** One update cycle as far as controllers see it (Lit calls hostUpdated before updated()). */
  update(): void {
    for (const c of this.controllers) c.hostUpdated?.();
  }
}

Deno.test("store subscription: listens from connect to disconnect, once, and each event requests an update", () => {
  const host = new FakeHost();
  const a = new CountingStore();
  host.controller = a;
  let handled = 0;
  new StoreSubscription(host, () => host.controller, { change: () => handled++ });
  a.emit();
  assertEquals([a.listeners, host.updatesRequested], [0, 0], "nothing before the host is connected");

  host.connect();
  host.update(); // the first update after connecting must not add a second listener
  host.update();
  assertEquals(a.listeners, 1);
  a.emit();
  assertEquals([host.updatesRequested, handled], [1, 1], "one update and one handler call per event");
  a.emit("other");
  assertEquals(host.updatesRequested, 1, "events not named are not listened to");

  host.disconnect();
  assertEquals(a.listeners, 0, "disconnecting removes the listener");
  a.emit();
  assertEquals(host.updatesRequested, 1);

  host.connect();
  assertEquals(a.listeners, 1, "reconnecting listens again");
  a.emit();
  assertEquals(host.updatesRequested, 2);
});

Deno.test("store subscription: follows a change of the host's property on the next update", () => {
  const host = new FakeHost();
  const a = new CountingStore();
  const b = new CountingStore();
  new StoreSubscription(host, () => host.controller);
  host.connect();
  assertEquals(a.listeners, 0, "a host without a store listens to nothing");

  host.controller = a;
  host.update();
  assertEquals([a.listeners, b.listeners], [1, 0]);

  host.controller = b;
  host.update();
  assertEquals([a.listeners, b.listeners], [0, 1], "the old store is left, the new one listened to");
  a.emit();
  assertEquals(host.updatesRequested, 0, "the old store no longer updates the host");
  b.emit();
  assertEquals(host.updatesRequested, 1, "the default listens to change");

  host.controller = null;
  host.update();
  assertEquals(b.listeners, 0, "a property set to null leaves the store");
});

Deno.test("store subscription: an update while disconnected subscribes nothing (no leak)", () => {
  const host = new FakeHost();
  const a = new CountingStore();
  const b = new CountingStore();
  host.controller = a;
  new StoreSubscription(host, () => host.controller);
  host.connect();
  host.disconnect();
  host.controller = b;
  host.update();
  assertEquals([a.listeners, b.listeners], [0, 0]);
  host.connect();
  assertEquals([a.listeners, b.listeners], [0, 1], "connecting again listens to the store held then");
});

Deno.test("store subscription: several events, each with its handler, run after the update is requested", () => {
  const host = new FakeHost();
  const a = new CountingStore();
  host.controller = a;
  const seen: string[] = [];
  new StoreSubscription(host, () => host.controller, {
    change: () => seen.push(`change after ${host.updatesRequested}`),
    replace: () => seen.push(`replace after ${host.updatesRequested}`),
  });
  host.connect();
  assertEquals(a.listeners, 2);
  a.emit("replace");
  a.emit("change");
  assertEquals(seen, ["replace after 1", "change after 2"]);
  host.disconnect();
  assertEquals(a.listeners, 0);
});
