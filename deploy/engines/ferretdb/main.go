// Command ferretdb-launcher runs an embedded FerretDB v1 server (MongoDB wire
// protocol) backed by SQLite, for local development and tests. It is built by
// scripts/engines.sh into the engines cache; FerretDB's own CLI is not used
// because it panics when built with `go install`.
//
//	ferretdb-launcher -listen-addr 127.0.0.1:27017 -data-dir /path/to/dir
//	ferretdb-launcher -selftest   # start on a free port in a temp dir, run checks, exit
//	ferretdb-launcher -ping mongodb://127.0.0.1:27017/   # readiness probe
//
// Auth is disabled (the embedded server has no users), TLS is off, logs go to stderr.
//
// By default (-serialize-writes) clients talk to a small wire-protocol proxy in
// this file, which forwards to FerretDB on an internal 127.0.0.1 port and runs
// mutating commands one at a time. Without it FerretDB v1 is NOT atomic:
// findAndModify/update are a read followed by a separate write, so 8 clients
// doing findAndModify {$inc} on one counter got duplicate values (and racing
// upserts of one _id fail with E11000). With the proxy both are correct.
//
// Verified with FerretDB v1.24.2 + SQLite by `-selftest` (mongo-go-driver) and
// with the Node.js `mongodb` 6.x driver:
//
//	works:   ping/hello; insert/find/sort/skip/limit/projection; $in $exists $gte
//	         $or $elemMatch, nested fields; $regex (incl. $options "i", anchors);
//	         unique (compound) index -> E11000 duplicate key (code 11000);
//	         findAndModify/findOneAndUpdate $inc with upsert + returnDocument after,
//	         with sort (job-claim pattern); $set $push $addToSet $pull $unset $max
//	         $setOnInsert; replaceOne; bulkWrite; deleteMany; countDocuments;
//	         distinct; aggregate $match/$group (ONE accumulator)/$sort/$limit;
//	         sparse index; dropDatabase; data persists across restarts.
//	does NOT work (FerretDB v1 SQLite):
//	  - multi-document transactions (startTransaction rejected)
//	  - TTL indexes: createIndex with expireAfterSeconds fails (NotImplemented)
//	  - partial indexes (partialFilterExpression), collation, text indexes/$text
//	  - $group with more than one accumulator: only the first sees the documents,
//	    the others come back 0 (a FerretDB bug: they share one iterator)
//	  - $lookup, $facet, change streams ($changeStream / watch)
//	  - arrayFilters ($[x]) and the positional $ operator in updates
//	  - Decimal128: the server drops the connection (store money as integers)
//	  - a unique index lets several documents lack the field (MongoDB rejects
//	    the second one unless the index is sparse/partial)
//	  - endSessions is unknown (harmless; drivers ignore the error)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"math"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/primitive"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data-dir", "", "directory for SQLite database files (created if missing)")
	logLevel := flag.String("log-level", "warn", "FerretDB log level: debug, info (logs every connection), warn (failed commands), error")
	selftest := flag.Bool("selftest", false, "start on a free port in a temporary directory, run feature checks, and exit")
	serialize := flag.Bool("serialize-writes", true,
		"front FerretDB with a wire-protocol proxy that runs mutating commands one at a time "+
			"(FerretDB v1 implements findAndModify/update as read-then-write, which is not atomic under concurrency)")
	ping := flag.String("ping", "", "connect to this mongodb:// URI, run {ping: 1}, and exit 0 on success (readiness probe)")
	flag.Parse()

	if *ping != "" {
		os.Exit(runPing(*ping))
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		fatalf("bad -log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	launcherLog := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("name", "launcher")

	if *selftest {
		dir, err := os.MkdirTemp("", "ferretdb-selftest-")
		if err != nil {
			fatalf("%v", err)
		}
		defer os.RemoveAll(dir)
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		os.Exit(runSelftest(quiet, "127.0.0.1:0", dir, *serialize))
	}

	if *dataDir == "" {
		fatalf("-data-dir is required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	uri, wait, err := start(ctx, logger, *listenAddr, *dataDir, *serialize)
	if err != nil {
		fatalf("%v", err)
	}
	launcherLog.Info("ferretdb-launcher ready", "uri", uri, "data_dir", *dataDir, "serialize_writes", *serialize)
	wait()
	launcherLog.Info("ferretdb-launcher stopped")
}

// start runs FerretDB (and, with serialize, the write-serializing proxy in
// front of it on listenAddr) until ctx is canceled. It returns the client URI
// and a function that blocks until everything has shut down.
func start(ctx context.Context, logger *slog.Logger, listenAddr, dataDir string, serialize bool) (string, func(), error) {
	backendAddr := listenAddr
	if serialize {
		backendAddr = "127.0.0.1:0"
	}
	f, err := newServer(logger, backendAddr, dataDir)
	if err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	go func() { _ = f.Run(ctx); close(done) }()
	if !serialize {
		return f.MongoDBURI(), func() { <-done }, nil
	}

	backend := strings.TrimSuffix(strings.TrimPrefix(f.MongoDBURI(), "mongodb://"), "/")
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return "", nil, err
	}
	proxyDone := make(chan struct{})
	go func() { serveProxy(ctx, logger, ln, backend); close(proxyDone) }()
	return "mongodb://" + ln.Addr().String() + "/", func() { <-proxyDone; <-done }, nil
}

func newServer(logger *slog.Logger, listenAddr, dataDir string) (*ferretdb.FerretDB, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	return ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listenAddr},
		Logger:   logger,
		Handler:  "sqlite",
		// SQLite handler wants a file: URI of a directory, with a trailing slash.
		SQLiteURL: "file:" + strings.TrimSuffix(abs, "/") + "/",
	})
}

func runPing(uri string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := mongo.Connect(ctx, options.Client().ApplyURI(uri).SetServerSelectionTimeout(3*time.Second))
	if err == nil {
		err = client.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		_ = client.Disconnect(context.Background())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ping %s: %v\n", uri, err)
		return 1
	}
	return 0
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ferretdb-launcher: "+format+"\n", args...)
	os.Exit(1)
}

// ---------------------------------------------------------------------------
// write-serializing wire proxy
//
// MongoDB's wire protocol is strictly request/response per connection (apart
// from moreToCome/exhaust, handled below), so each client connection gets its
// own backend connection and a simple loop: read one request, forward it, copy
// the reply back. Requests whose command is in mutatingCommands hold a global
// lock for the whole round trip, which makes FerretDB's read-then-write
// findAndModify/update atomic with respect to each other. SQLite has a single
// writer anyway, so the throughput cost is small; reads are never blocked.

var writeLock sync.Mutex

// lockedReplyTimeout bounds how long a request holding writeLock waits for FerretDB's reply. A backend
// request that never returns (seen once with a multi-statement bulkWrite) would otherwise hold the lock,
// and so every writer of every test, forever; past the bound the connection is dropped (the client sees a
// network error and retries or fails) and the lock released.
const lockedReplyTimeout = 60 * time.Second

var mutatingCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findandmodify": true,
	"create": true, "createindexes": true, "drop": true, "dropindexes": true,
	"dropdatabase": true, "renamecollection": true, "collmod": true,
}

const (
	opReply      = 1
	opQuery      = 2004
	opCompressed = 2012
	opMsg        = 2013

	msgMoreToCome = 1 << 1
	maxMessage    = 48 << 20
)

func serveProxy(ctx context.Context, logger *slog.Logger, ln net.Listener, backend string) {
	go func() { <-ctx.Done(); ln.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				logger.Error("proxy accept", "error", err)
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			proxyConn(ctx, logger, c, backend)
		}()
	}
}

func proxyConn(ctx context.Context, logger *slog.Logger, client net.Conn, backend string) {
	defer client.Close()
	server, err := net.Dial("tcp", backend)
	if err != nil {
		logger.Error("proxy dial backend", "error", err)
		return
	}
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { client.Close(); server.Close() })
	defer stop()

	cr, sr := bufio.NewReader(client), bufio.NewReader(server)
	for {
		req, err := readMessage(cr)
		if err != nil {
			return
		}
		opCode := int32(binary.LittleEndian.Uint32(req[12:16]))
		locked := opCode == opCompressed || mutatingCommands[commandName(req)]
		if locked {
			writeLock.Lock()
			_ = server.SetReadDeadline(time.Now().Add(lockedReplyTimeout))
		}
		err = roundTrip(req, opCode, server, sr, client)
		if locked {
			_ = server.SetReadDeadline(time.Time{})
			writeLock.Unlock()
			if err != nil {
				logger.Warn("proxy: write request ended without a reply; connection dropped, lock released", "error", err)
			}
		}
		if err != nil {
			return
		}
	}
}

func roundTrip(req []byte, opCode int32, server net.Conn, sr *bufio.Reader, client net.Conn) error {
	if _, err := server.Write(req); err != nil {
		return err
	}
	if opCode == opMsg && binary.LittleEndian.Uint32(req[16:20])&msgMoreToCome != 0 {
		return nil // fire-and-forget (w:0): no reply
	}
	for {
		resp, err := readMessage(sr)
		if err != nil {
			return err
		}
		if _, err := client.Write(resp); err != nil {
			return err
		}
		// exhaust cursors / streaming hello: more replies follow without a request
		respOp := int32(binary.LittleEndian.Uint32(resp[12:16]))
		if respOp != opMsg || binary.LittleEndian.Uint32(resp[16:20])&msgMoreToCome == 0 {
			return nil
		}
	}
}

func readMessage(r *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(hdr[:])))
	if n < 16 || n > maxMessage {
		return nil, fmt.Errorf("bad message length %d", n)
	}
	buf := make([]byte, n)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	return buf, nil
}

// commandName returns the lower-cased first key of the command document of an
// OP_MSG (section kind 0) or of a legacy OP_QUERY, or "" if it can't tell.
func commandName(msg []byte) string {
	var doc []byte
	switch int32(binary.LittleEndian.Uint32(msg[12:16])) {
	case opMsg:
		// header(16) flagBits(4), then sections; find the kind-0 (body) section.
		p := 20
		for p < len(msg) {
			kind := msg[p]
			p++
			if kind == 0 {
				doc = msg[p:]
				break
			}
			if kind != 1 || p+4 > len(msg) {
				return ""
			}
			p += int(binary.LittleEndian.Uint32(msg[p:])) // kind 1: int32 size includes itself
		}
	case opQuery:
		// header(16) flags(4) fullCollectionName(cstring) skip(4) return(4) query doc
		p := 20
		i := bytes.IndexByte(msg[p:], 0)
		if i < 0 {
			return ""
		}
		p += i + 1 + 8
		if p > len(msg) {
			return ""
		}
		doc = msg[p:]
	default:
		return ""
	}
	// BSON: int32 length, then element: type byte, cstring key
	if len(doc) < 6 {
		return ""
	}
	key := doc[5:]
	i := bytes.IndexByte(key, 0)
	if i < 0 {
		return ""
	}
	return strings.ToLower(string(key[:i]))
}

// ---------------------------------------------------------------------------
// self-test

type check struct {
	name     string
	required bool // the application relies on it; failing it fails the self-test
	fn       func(ctx context.Context, db *mongo.Database) error
}

func runSelftest(logger *slog.Logger, listenAddr, dir string, serialize bool) int {
	ctx, cancel := context.WithCancel(context.Background())
	uri, wait, err := start(ctx, logger, listenAddr, dir, serialize)
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "selftest: start: %v\n", err)
		return 1
	}
	defer func() { cancel(); wait() }()
	fmt.Printf("selftest: FerretDB %s (serialize-writes=%v)\n", uri, serialize)

	cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer ccancel()
	client, err := mongo.Connect(cctx, options.Client().ApplyURI(uri).SetServerSelectionTimeout(10*time.Second))
	if err != nil {
		fmt.Fprintf(os.Stderr, "selftest: connect %s: %v\n", uri, err)
		return 1
	}
	defer client.Disconnect(context.Background())
	db := client.Database("selftest")

	failed := 0
	for _, c := range checks() {
		tctx, tcancel := context.WithTimeout(cctx, 20*time.Second)
		err := c.fn(tctx, db)
		tcancel()
		switch {
		case err == nil:
			fmt.Printf("  ok    %s\n", c.name)
		case c.required:
			failed++
			fmt.Printf("  FAIL  %s: %v\n", c.name, oneLine(err))
		default:
			fmt.Printf("  gap   %s: %v\n", c.name, oneLine(err))
		}
	}
	if failed > 0 {
		fmt.Printf("selftest: %d required check(s) failed\n", failed)
		return 1
	}
	fmt.Println("selftest: all required checks passed")
	return 0
}

func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func concurrentInc(ctx context.Context, c *mongo.Collection, id string, clients, each int) error {
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	seen := sync.Map{}
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				var out bson.M
				err := c.FindOneAndUpdate(ctx, bson.M{"_id": id}, bson.M{"$inc": bson.M{"seq": 1}},
					options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&out)
				if err != nil {
					errs <- err
					return
				}
				if _, dup := seen.LoadOrStore(out["seq"], true); dup {
					errs <- fmt.Errorf("duplicate seq %v", out["seq"])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	var out bson.M
	if err := c.FindOne(ctx, bson.M{"_id": id}).Decode(&out); err != nil {
		return err
	}
	if out["seq"] != int32(clients*each) {
		return fmt.Errorf("final seq=%v want %d", out["seq"], clients*each)
	}
	return nil
}

func groupByStatus(ctx context.Context, db *mongo.Database, group bson.D) ([]bson.M, error) {
	cur, err := db.Collection("q").Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.M{"i": bson.M{"$gte": 0}}}},
		{{Key: "$group", Value: group}},
		{{Key: "$sort", Value: bson.M{"_id": 1}}},
		{{Key: "$limit", Value: 10}},
	})
	if err != nil {
		return nil, err
	}
	var out []bson.M
	err = cur.All(ctx, &out)
	return out, err
}

func checks() []check {
	return []check{
		{"ping", true, func(ctx context.Context, db *mongo.Database) error {
			return db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		}},
		{"hello", true, func(ctx context.Context, db *mongo.Database) error {
			return db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Err()
		}},
		{"insertOne + findOne", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("docs")
			if _, err := c.InsertOne(ctx, bson.M{"_id": "a", "n": 1, "when": time.Now()}); err != nil {
				return err
			}
			var out bson.M
			if err := c.FindOne(ctx, bson.M{"_id": "a"}).Decode(&out); err != nil {
				return err
			}
			if out["n"] != int32(1) {
				return fmt.Errorf("unexpected doc %v", out)
			}
			return nil
		}},
		{"_id lookups use the _id_ index (patches/sqlite-id-pushdown.patch)", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("pushdown_plan")
			if _, err := c.InsertMany(ctx, []any{bson.M{"_id": int32(7), "v": 0}, bson.M{"_id": "k:1", "v": 0}}); err != nil {
				return err
			}
			for _, filter := range []bson.M{
				{"_id": int32(7)},
				{"_id": int64(7), "v": 0},
				{"_id": "k:1", "v": bson.M{"$gte": 0}},
				{"_id": bson.M{"$in": bson.A{int32(7), "k:1"}}},
			} {
				var plan bson.M
				err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "pushdown_plan"}, {Key: "filter", Value: filter}}}}).Decode(&plan)
				if err != nil {
					return err
				}
				if text := fmt.Sprint(plan["queryPlanner"]); !strings.Contains(text, "USING INDEX") {
					return fmt.Errorf("filter %v is not served by an index: %s", filter, text)
				}
			}
			return nil
		}},
		{"_id pushdown keeps MongoDB's matching (number types, $in, other keys, -0)", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("pushdown_match")
			if _, err := c.InsertMany(ctx, []any{
				bson.M{"_id": int32(1), "v": 1}, bson.M{"_id": int64(2), "v": 1}, bson.M{"_id": 3.0, "v": 1},
				bson.M{"_id": 0.5, "v": 1}, bson.M{"_id": int32(0), "v": 1}, bson.M{"_id": "s", "v": 2},
			}); err != nil {
				return err
			}
			cases := []struct {
				filter bson.M
				want   int64
			}{
				{bson.M{"_id": int64(1)}, 1}, {bson.M{"_id": 2.0}, 1}, {bson.M{"_id": int32(3)}, 1},
				{bson.M{"_id": 0.5}, 1}, {bson.M{"_id": math.Copysign(0, -1)}, 1}, {bson.M{"_id": int32(1), "v": 2}, 0},
				{bson.M{"_id": "s", "v": 2}, 1}, {bson.M{"_id": bson.M{"$in": bson.A{int32(1), int64(2), 3.0, "s", "t"}}}, 4},
				{bson.M{"_id": bson.M{"$eq": int64(3)}}, 1},
			}
			for _, tc := range cases {
				got, err := c.CountDocuments(ctx, tc.filter)
				if err != nil {
					return err
				}
				if got != tc.want {
					return fmt.Errorf("filter %v matched %d documents, MongoDB matches %d", tc.filter, got, tc.want)
				}
				n, err := c.Find(ctx, tc.filter)
				if err != nil {
					return err
				}
				var docs []bson.M
				if err := n.All(ctx, &docs); err != nil {
					return err
				}
				if int64(len(docs)) != tc.want {
					return fmt.Errorf("find %v returned %d documents, MongoDB returns %d", tc.filter, len(docs), tc.want)
				}
			}
			return nil
		}},
		{"unique index -> E11000 duplicate key", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("uniq")
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{
				Keys: bson.D{{Key: "tenant", Value: 1}, {Key: "number", Value: 1}}, Options: options.Index().SetUnique(true),
			}); err != nil {
				return err
			}
			if _, err := c.InsertOne(ctx, bson.M{"tenant": "t1", "number": "INV-1"}); err != nil {
				return err
			}
			_, err := c.InsertOne(ctx, bson.M{"tenant": "t1", "number": "INV-1"})
			if !mongo.IsDuplicateKeyError(err) || !strings.Contains(fmt.Sprint(err), "E11000") {
				return fmt.Errorf("expected E11000 duplicate key error, got %v", err)
			}
			return nil
		}},
		{"findAndModify $inc upsert returnNew", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("counters")
			for want := int32(1); want <= 3; want++ {
				var out bson.M
				err := c.FindOneAndUpdate(ctx, bson.M{"_id": "invoice:t1"}, bson.M{"$inc": bson.M{"seq": 1}},
					options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&out)
				if err != nil {
					return err
				}
				if out["seq"] != want {
					return fmt.Errorf("seq=%v want %d", out["seq"], want)
				}
			}
			return nil
		}},
		{"findAndModify $inc: 8 clients x 25 on an existing counter (no lost/duplicate values)", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("counters")
			if _, err := c.InsertOne(ctx, bson.M{"_id": "conc", "seq": int32(0)}); err != nil {
				return err
			}
			return concurrentInc(ctx, c, "conc", 8, 25)
		}},
		{"findOneAndUpdate with sort (claim oldest pending job)", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("jobs")
			base := time.Now().Truncate(time.Millisecond)
			if _, err := c.InsertMany(ctx, []any{
				bson.M{"_id": "j2", "state": "pending", "at": base.Add(2 * time.Second)},
				bson.M{"_id": "j1", "state": "pending", "at": base.Add(1 * time.Second)},
				bson.M{"_id": "j0", "state": "done", "at": base},
			}); err != nil {
				return err
			}
			var out bson.M
			err := c.FindOneAndUpdate(ctx, bson.M{"state": "pending", "at": bson.M{"$lte": base.Add(time.Hour)}},
				bson.M{"$set": bson.M{"state": "running"}, "$inc": bson.M{"attempts": 1}},
				options.FindOneAndUpdate().SetSort(bson.D{{Key: "at", Value: 1}}).SetReturnDocument(options.After)).Decode(&out)
			if err != nil {
				return err
			}
			if out["_id"] != "j1" || out["state"] != "running" {
				return fmt.Errorf("claimed %v", out)
			}
			return nil
		}},
		{"$addToSet/$pull/$unset/$max/replaceOne/$or/nested fields", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("ops")
			if _, err := c.InsertOne(ctx, bson.M{"_id": 1, "tags": bson.A{"a"}, "tmp": 1, "hi": 1, "addr": bson.M{"city": "Berlin"}}); err != nil {
				return err
			}
			if _, err := c.UpdateOne(ctx, bson.M{"_id": 1}, bson.M{"$addToSet": bson.M{"tags": "b"}, "$unset": bson.M{"tmp": ""}, "$max": bson.M{"hi": 5}}); err != nil {
				return err
			}
			if _, err := c.UpdateOne(ctx, bson.M{"_id": 1}, bson.M{"$pull": bson.M{"tags": "a"}}); err != nil {
				return err
			}
			n, err := c.CountDocuments(ctx, bson.M{"$or": bson.A{bson.M{"addr.city": "Berlin"}, bson.M{"x": 1}}, "tags": "b", "hi": 5, "tmp": bson.M{"$exists": false}})
			if err != nil || n != 1 {
				return fmt.Errorf("count=%d err=%v", n, err)
			}
			if _, err := c.ReplaceOne(ctx, bson.M{"_id": 1}, bson.M{"v": 2}); err != nil {
				return err
			}
			return nil
		}},
		{"$regex (case-insensitive, anchored)", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("customers")
			if _, err := c.InsertMany(ctx, []any{bson.M{"name": "Acme GmbH"}, bson.M{"name": "acme ltd"}, bson.M{"name": "Other"}}); err != nil {
				return err
			}
			n, err := c.CountDocuments(ctx, bson.M{"name": bson.M{"$regex": "^acme", "$options": "i"}})
			if err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("matched %d want 2", n)
			}
			n, err = c.CountDocuments(ctx, bson.M{"name": primitive.Regex{Pattern: "GmbH$"}})
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("matched %d want 1", n)
			}
			return nil
		}},
		{"updateOne $set/$push/$setOnInsert upsert", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("upd")
			_, err := c.UpdateOne(ctx, bson.M{"_id": 1}, bson.M{"$set": bson.M{"s": "x"}, "$push": bson.M{"events": "e1"}, "$setOnInsert": bson.M{"created": 1}},
				options.Update().SetUpsert(true))
			return err
		}},
		{"find sort/skip/limit/projection, $in/$exists/$gte", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("q")
			docs := []any{}
			for i := 0; i < 10; i++ {
				docs = append(docs, bson.M{"i": i, "status": []string{"draft", "sent"}[i%2]})
			}
			if _, err := c.InsertMany(ctx, docs); err != nil {
				return err
			}
			cur, err := c.Find(ctx, bson.M{"status": bson.M{"$in": bson.A{"sent"}}, "i": bson.M{"$gte": 2}, "status2": bson.M{"$exists": false}},
				options.Find().SetSort(bson.D{{Key: "i", Value: -1}}).SetSkip(1).SetLimit(2).SetProjection(bson.M{"i": 1, "_id": 0}))
			if err != nil {
				return err
			}
			var out []bson.M
			if err := cur.All(ctx, &out); err != nil {
				return err
			}
			if len(out) != 2 || out[0]["i"] != int32(7) || out[1]["i"] != int32(5) {
				return fmt.Errorf("got %v", out)
			}
			return nil
		}},
		{"aggregate $match/$group (one $sum)/$sort/$limit", true, func(ctx context.Context, db *mongo.Database) error {
			out, err := groupByStatus(ctx, db, bson.D{{Key: "_id", Value: "$status"}, {Key: "total", Value: bson.M{"$sum": "$i"}}})
			if err != nil {
				return err
			}
			if len(out) != 2 || out[0]["total"] != int32(20) || out[1]["total"] != int32(25) {
				return fmt.Errorf("got %v", out)
			}
			return nil
		}},
		{"bulkWrite + deleteMany + countDocuments", true, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("bulk")
			_, err := c.BulkWrite(ctx, []mongo.WriteModel{
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 1}),
				mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": 1}).SetUpdate(bson.M{"$set": bson.M{"x": 1}}),
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 2}),
			})
			if err != nil {
				return err
			}
			if _, err := c.DeleteMany(ctx, bson.M{"_id": 2}); err != nil {
				return err
			}
			n, err := c.CountDocuments(ctx, bson.M{})
			if err != nil || n != 1 {
				return fmt.Errorf("count=%d err=%v", n, err)
			}
			return nil
		}},
		// ---- probes: not required, reported as gaps ----
		{"findAndModify upsert: 8 clients x 25 racing on one missing _id", false, func(ctx context.Context, db *mongo.Database) error {
			return concurrentInc(ctx, db.Collection("counters"), "race", 8, 25)
		}},
		{"$group with two accumulators ($sum amount + $sum 1)", false, func(ctx context.Context, db *mongo.Database) error {
			out, err := groupByStatus(ctx, db, bson.D{{Key: "_id", Value: "$status"}, {Key: "total", Value: bson.M{"$sum": "$i"}}, {Key: "n", Value: bson.M{"$sum": 1}}})
			if err != nil {
				return err
			}
			if len(out) != 2 || out[0]["total"] != int32(20) || out[0]["n"] != int32(5) {
				return fmt.Errorf("wrong result (only the first accumulator sees the documents): %v", out)
			}
			return nil
		}},
		{"Decimal128 round-trip", false, func(ctx context.Context, db *mongo.Database) error {
			d, _ := primitive.ParseDecimal128("1234.56")
			_, err := db.Collection("dec").InsertOne(ctx, bson.M{"amount": d})
			return err
		}},
		{"multi-document transaction", false, func(ctx context.Context, db *mongo.Database) error {
			sess, err := db.Client().StartSession()
			if err != nil {
				return err
			}
			defer sess.EndSession(ctx)
			_, err = sess.WithTransaction(ctx, func(sc mongo.SessionContext) (any, error) {
				_, err := db.Collection("tx").InsertOne(sc, bson.M{"x": 1})
				return nil, err
			})
			return err
		}},
		{"TTL index (expireAfterSeconds) creation", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("ttl").Indexes().CreateOne(ctx, mongo.IndexModel{
				Keys: bson.M{"createdAt": 1}, Options: options.Index().SetExpireAfterSeconds(60),
			})
			return err
		}},
		{"partial index (partialFilterExpression)", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("partial").Indexes().CreateOne(ctx, mongo.IndexModel{
				Keys:    bson.M{"key": 1},
				Options: options.Index().SetUnique(true).SetPartialFilterExpression(bson.M{"key": bson.M{"$exists": true}}),
			})
			return err
		}},
		{"sparse index", false, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("sparse")
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{
				Keys: bson.M{"key": 1}, Options: options.Index().SetUnique(true).SetSparse(true),
			}); err != nil {
				return err
			}
			// A sparse unique index must allow many documents without the field.
			if _, err := c.InsertMany(ctx, []any{bson.M{"a": 1}, bson.M{"a": 2}}); err != nil {
				return fmt.Errorf("option accepted but not honoured: %w", err)
			}
			return nil
		}},
		{"unique index: two docs missing the field conflict (as in MongoDB)", false, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("uniqnull")
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.M{"ext": 1}, Options: options.Index().SetUnique(true)}); err != nil {
				return err
			}
			if _, err := c.InsertOne(ctx, bson.M{"a": 1}); err != nil {
				return err
			}
			_, err := c.InsertOne(ctx, bson.M{"a": 2})
			if !mongo.IsDuplicateKeyError(err) {
				return fmt.Errorf("second document without the field was accepted (MongoDB rejects it): %v", err)
			}
			return nil
		}},
		{"aggregate $lookup", false, func(ctx context.Context, db *mongo.Database) error {
			cur, err := db.Collection("q").Aggregate(ctx, mongo.Pipeline{
				{{Key: "$lookup", Value: bson.M{"from": "customers", "localField": "i", "foreignField": "n", "as": "c"}}},
			})
			if err == nil {
				cur.Close(ctx)
			}
			return err
		}},
		{"update with arrayFilters", false, func(ctx context.Context, db *mongo.Database) error {
			c := db.Collection("af")
			if _, err := c.InsertOne(ctx, bson.M{"_id": 1, "lines": bson.A{bson.M{"id": "a", "q": 1}}}); err != nil {
				return err
			}
			_, err := c.UpdateOne(ctx, bson.M{"_id": 1}, bson.M{"$set": bson.M{"lines.$[l].q": 2}},
				options.Update().SetArrayFilters(options.ArrayFilters{Filters: []any{bson.M{"l.id": "a"}}}))
			return err
		}},
		{"positional $ update", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("af").UpdateOne(ctx, bson.M{"_id": 1, "lines.id": "a"}, bson.M{"$set": bson.M{"lines.$.q": 3}})
			return err
		}},
		{"$elemMatch query", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("af").CountDocuments(ctx, bson.M{"lines": bson.M{"$elemMatch": bson.M{"id": "a"}}})
			return err
		}},
		{"text index / $text", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("txt").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.M{"name": "text"}})
			return err
		}},
		{"change streams (watch)", false, func(ctx context.Context, db *mongo.Database) error {
			cs, err := db.Collection("docs").Watch(ctx, mongo.Pipeline{})
			if err == nil {
				cs.Close(ctx)
			}
			return err
		}},
		{"distinct", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("q").Distinct(ctx, "status", bson.M{})
			return err
		}},
		{"aggregate $facet", false, func(ctx context.Context, db *mongo.Database) error {
			cur, err := db.Collection("q").Aggregate(ctx, mongo.Pipeline{
				{{Key: "$facet", Value: bson.M{"n": bson.A{bson.M{"$count": "n"}}}}},
			})
			if err == nil {
				cur.Close(ctx)
			}
			return err
		}},
		{"collation (case-insensitive index)", false, func(ctx context.Context, db *mongo.Database) error {
			_, err := db.Collection("coll").Indexes().CreateOne(ctx, mongo.IndexModel{
				Keys: bson.M{"email": 1}, Options: options.Index().SetCollation(&options.Collation{Locale: "en", Strength: 2}),
			})
			return err
		}},
		{"dropDatabase", true, func(ctx context.Context, db *mongo.Database) error {
			if err := db.Drop(ctx); err != nil {
				return err
			}
			names, err := db.Client().ListDatabaseNames(ctx, bson.M{})
			if err != nil {
				return err
			}
			for _, n := range names {
				if n == db.Name() {
					return errors.New("database still listed after drop")
				}
			}
			return nil
		}},
	}
}
