`ifndef AXI4_RULES_VH
`define AXI4_RULES_VH
`default_nettype none
// axi4_rules: the AXI4 rules the chip relies on, as formal properties of one port: the rules of
// the simulation checker hw/tb/axi_checker.v (model.chip.rtl_defs.AxiRule), each labelled
// <CHANNEL>_<RULE> and checked as that checker checks it, cycle 0 the first after reset.
//
// SUBORDINATE picks who is checked. 0 (a manager under proof): the manager's obligations (AR, AW,
// W) are asserted and the subordinate's (R, B) assumed, so the subordinate is free in every
// other way (any ready pattern, any latency, any response). 1 (a scripted port, both sides):
// every rule asserted.
//
// W beats may come before their AW, as AXI4 allows: W bursts (ended by wlast) and AWs pair in
// order, as the checker pairs them, in the cycle after both are known; BURSTS of each are
// tracked, and W_TRACKED asserts that is enough for the port checked.
//
// A header, included by each wrapper that checks a port (mem_if.sv, axi_bad_manager.sv): the
// formal flow copies hw/formal's headers into every check (verif/formal/sby.py).
module axi4_rules #(
    parameter READS_MAX   = 2,    // the reads outstanding the manager declares
    parameter SUBORDINATE = 0,    // 1: the subordinate's obligations asserted too, not assumed
    parameter BURSTS      = 4     // AWs, and W bursts, tracked while they wait for their pair
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [0:0]  arid,
    input  wire [31:0] araddr,
    input  wire [7:0]  arlen,
    input  wire [2:0]  arsize,
    input  wire [1:0]  arburst,
    input  wire        arvalid,
    input  wire        arready,
    input  wire [0:0]  rid,
    input  wire [31:0] rdata,
    input  wire [1:0]  rresp,
    input  wire        rlast,
    input  wire        rvalid,
    input  wire        rready,
    input  wire [0:0]  awid,
    input  wire [31:0] awaddr,
    input  wire [7:0]  awlen,
    input  wire [2:0]  awsize,
    input  wire [1:0]  awburst,
    input  wire        awvalid,
    input  wire        awready,
    input  wire [31:0] wdata,
    input  wire [3:0]  wstrb,
    input  wire        wlast,
    input  wire        wvalid,
    input  wire        wready,
    input  wire [0:0]  bid,
    input  wire [1:0]  bresp,
    input  wire        bvalid,
    input  wire        bready,

    output reg  [15:0] cycle,          // cycles since reset (saturating), as the checker counts
    output reg  [8:0]  reads_out,      // AR handshakes whose last R beat has not come
    output reg  [8:0]  writes_open,    // AW handshakes not yet answered by a B
    // the bookkeeping, for a manager's invariants (mem_if_invariants.vh): the AWs and the W
    // bursts waiting for their pair, oldest first (entry i valid for i < its count), the beats
    // of the W burst in progress, the W bursts ended and not answered, and the queues' pointers
    // consistent with their counts
    output wire [8*BURSTS-1:0] aw_pending,    // awlen of each
    output wire [9*BURSTS-1:0] w_pending,     // beats of each
    output wire [8:0]  aw_pending_n,
    output wire [8:0]  w_pending_n,
    output wire [8:0]  w_beat_n,
    output wire [8:0]  wlast_n,
    output wire        books_ok
);

localparam RQW = (READS_MAX > 1) ? $clog2(READS_MAX) : 1;
localparam BQW = (BURSTS > 1) ? $clog2(BURSTS) : 1;

// ---------------------------------------------------------------------------------------------
// valid held until ready with a stable payload: what each channel showed in the last cycle

wire [45:0] ar_pay = {arid, araddr, arlen, arsize, arburst};
wire [45:0] aw_pay = {awid, awaddr, awlen, awsize, awburst};
wire [36:0] w_pay  = {wdata, wstrb, wlast};
wire [35:0] r_pay  = {rid, rdata, rresp, rlast};
wire [2:0]  b_pay  = {bid, bresp};

reg        ar_wait, aw_wait, w_wait, r_wait, b_wait;    // valid without ready last cycle
reg [45:0] ar_last, aw_last;
reg [36:0] w_last;
reg [35:0] r_last;
reg [2:0]  b_last;

// an address burst's shape: INCR, 4-byte beats, a 4-byte aligned address
function shape_ok;
    input [2:0] size;
    input [1:0] burst;
    input [1:0] addr;
    begin
        shape_ok = (size == 3'd2) && (burst == 2'b01) && (addr == 2'b00);
    end
endfunction

// a burst of 4-byte beats that runs past the end of its 4 KB page
function crosses_4k;
    input [11:0] addr;    // the burst's offset in its page
    input [7:0]  len;
    begin
        crosses_4k = ({1'b0, addr} + {3'd0, len, 2'b00} + 13'd4) > 13'h1000;
    end
endfunction

function [RQW-1:0] rq_next;
    input [RQW-1:0] i;
    begin
        rq_next = (i == READS_MAX - 1) ? {RQW{1'b0}} : i + 1'b1;
    end
endfunction

function [BQW-1:0] bq_next;
    input [BQW-1:0] i;
    begin
        bq_next = (i == BURSTS - 1) ? {BQW{1'b0}} : i + 1'b1;
    end
endfunction

// ---------------------------------------------------------------------------------------------
// bursts in flight

wire ar_fire = arvalid && arready;
wire r_fire  = rvalid && rready;
wire aw_fire = awvalid && awready;
wire w_fire  = wvalid && wready;
wire b_fire  = bvalid && bready;

reg [7:0]     rq [0:READS_MAX-1];    // arlen of each outstanding read, oldest at rq_head
reg [RQW-1:0] rq_head, rq_tail;
reg [8:0]     r_beat;                // beats of the oldest read received
reg [7:0]     awq [0:BURSTS-1];      // awlen of each AW not yet paired with its W burst
reg [BQW-1:0] awq_head, awq_tail;
reg [BQW:0]   awq_count;
reg [8:0]     wq [0:BURSTS-1];       // beats of each W burst (ended by wlast) not yet paired
reg [BQW-1:0] wq_head, wq_tail;
reg [BQW:0]   wq_count;
reg [8:0]     w_beats;               // beats of the W burst in progress
reg [8:0]     wlast_open;            // W bursts ended and not yet answered by a B

wire r_expect_last = (r_beat[7:0] == rq[rq_head]);
wire r_end         = r_fire && (reads_out != 9'd0) && (rlast || r_expect_last);
wire pair          = (awq_count != 0) && (wq_count != 0);
wire pair_bad      = pair && ({1'b0, awq[awq_head]} + 9'd1 != wq[wq_head]);
wire w_runaway     = w_fire && !wlast && (w_beats == 9'd255);    // a 257th beat next
wire w_end         = w_fire && (wlast || w_runaway);

always @(posedge clk) begin
    if (rst) begin
        cycle       <= 16'd0;
        ar_wait     <= 1'b0;
        aw_wait     <= 1'b0;
        w_wait      <= 1'b0;
        r_wait      <= 1'b0;
        b_wait      <= 1'b0;
        rq_head     <= {RQW{1'b0}};
        rq_tail     <= {RQW{1'b0}};
        r_beat      <= 9'd0;
        reads_out   <= 9'd0;
        awq_head    <= {BQW{1'b0}};
        awq_tail    <= {BQW{1'b0}};
        awq_count   <= {(BQW+1){1'b0}};
        wq_head     <= {BQW{1'b0}};
        wq_tail     <= {BQW{1'b0}};
        wq_count    <= {(BQW+1){1'b0}};
        w_beats     <= 9'd0;
        writes_open <= 9'd0;
        wlast_open  <= 9'd0;
    end else begin
        cycle   <= cycle + {15'd0, cycle != 16'hFFFF};
        ar_wait <= arvalid && !arready;
        aw_wait <= awvalid && !awready;
        w_wait  <= wvalid && !wready;
        r_wait  <= rvalid && !rready;
        b_wait  <= bvalid && !bready;
        ar_last <= ar_pay;
        aw_last <= aw_pay;
        w_last  <= w_pay;
        r_last  <= r_pay;
        b_last  <= b_pay;
        // reads
        if (ar_fire) begin
            rq[rq_tail] <= arlen;
            rq_tail     <= rq_next(rq_tail);
        end
        if (r_fire && reads_out != 9'd0) begin
            r_beat <= (rlast || r_expect_last) ? 9'd0 : r_beat + 9'd1;
        end
        if (r_end) begin
            rq_head <= rq_next(rq_head);
        end
        reads_out <= reads_out + {8'd0, ar_fire} - {8'd0, r_end};
        // writes: AWs and W bursts pair in order
        if (aw_fire) begin
            awq[awq_tail] <= awlen;
            awq_tail      <= bq_next(awq_tail);
        end
        if (w_end) begin
            wq[wq_tail] <= w_beats + 9'd1;
            wq_tail     <= bq_next(wq_tail);
        end
        w_beats <= !w_fire ? w_beats : w_end ? 9'd0 : w_beats + 9'd1;
        if (pair) begin
            awq_head <= bq_next(awq_head);
            wq_head  <= bq_next(wq_head);
        end
        awq_count   <= awq_count + {{BQW{1'b0}}, aw_fire} - {{BQW{1'b0}}, pair};
        wq_count    <= wq_count + {{BQW{1'b0}}, w_end} - {{BQW{1'b0}}, pair};
        writes_open <= writes_open + {8'd0, aw_fire} - {8'd0, b_fire};
        wlast_open  <= wlast_open + {8'd0, w_end} - {8'd0, b_fire};
    end
end

// the queues from their heads, and where each tail must be (no division: READS_MAX may not be a
// power of two)
reg [8*BURSTS-1:0] aw_view;
reg [9*BURSTS-1:0] w_view;
reg [BQW-1:0]      awq_at, wq_at, awq_end, wq_end;
reg [RQW-1:0]      rq_end;
integer            vi;
always @(*) begin
    awq_at  = awq_head;
    wq_at   = wq_head;
    awq_end = awq_head;
    wq_end  = wq_head;
    rq_end  = rq_head;
    for (vi = 0; vi < BURSTS; vi = vi + 1) begin
        aw_view[8*vi +: 8] = awq[awq_at];
        w_view[9*vi +: 9]  = wq[wq_at];
        awq_at = bq_next(awq_at);
        wq_at  = bq_next(wq_at);
        if (vi < awq_count) awq_end = bq_next(awq_end);
        if (vi < wq_count) wq_end = bq_next(wq_end);
    end
    for (vi = 0; vi < READS_MAX; vi = vi + 1)
        if (vi < reads_out) rq_end = rq_next(rq_end);
end
assign aw_pending   = aw_view;
assign w_pending    = w_view;
assign aw_pending_n = {{(8-BQW){1'b0}}, awq_count};
assign w_pending_n  = {{(8-BQW){1'b0}}, wq_count};
assign w_beat_n     = w_beats;
assign wlast_n      = wlast_open;
assign books_ok     = awq_count <= BURSTS && wq_count <= BURSTS && reads_out <= READS_MAX
                      && awq_tail == awq_end && wq_tail == wq_end
                      && rq_head < READS_MAX && rq_tail == rq_end;

// ---------------------------------------------------------------------------------------------
// the manager's obligations: asserted

always @(posedge clk) begin
    if (!rst) begin
        if (ar_wait) begin
            // VALID_DROPPED: arvalid held until arready
            AR_VALID_DROPPED: assert (arvalid);
            // PAYLOAD_CHANGED: the AR payload stable while arvalid waits
            if (arvalid) AR_PAYLOAD_CHANGED: assert (ar_pay == ar_last);
        end
        if (aw_wait) begin
            // VALID_DROPPED: awvalid held until awready
            AW_VALID_DROPPED: assert (awvalid);
            // PAYLOAD_CHANGED: the AW payload stable while awvalid waits
            if (awvalid) AW_PAYLOAD_CHANGED: assert (aw_pay == aw_last);
        end
        if (w_wait) begin
            // VALID_DROPPED: wvalid held until wready
            W_VALID_DROPPED: assert (wvalid);
            // PAYLOAD_CHANGED: the W payload stable while wvalid waits
            if (wvalid) W_PAYLOAD_CHANGED: assert (w_pay == w_last);
        end
        if (arvalid) begin
            // BURST_SHAPE: an AR is INCR with 4-byte beats at an aligned address
            AR_BURST_SHAPE: assert (shape_ok(arsize, arburst, araddr[1:0]));
            // CROSSES_4K: an AR burst (1 .. 256 beats: the field) stays in its 4 KB page
            if (shape_ok(arsize, arburst, araddr[1:0]))
                AR_CROSSES_4K: assert (!crosses_4k(araddr[11:0], arlen));
        end
        if (awvalid) begin
            // BURST_SHAPE: an AW is INCR with 4-byte beats at an aligned address
            AW_BURST_SHAPE: assert (shape_ok(awsize, awburst, awaddr[1:0]));
            // CROSSES_4K: an AW burst stays in its 4 KB page
            if (shape_ok(awsize, awburst, awaddr[1:0]))
                AW_CROSSES_4K: assert (!crosses_4k(awaddr[11:0], awlen));
        end
        // READS_OUTSTANDING: no AR handshake while READS_MAX reads are outstanding
        if (ar_fire) AR_READS_OUTSTANDING: assert (reads_out < READS_MAX);
        // WLAST: a W burst's beats up to its wlast (or 257 without one) are its AW's length
        W_WLAST: assert (!pair_bad && !w_runaway);
        // not an AxiRule: BURSTS is deep enough to pair every AW and W burst of this port
        W_TRACKED: assert (!(aw_fire && !pair && awq_count == BURSTS) &&
                           !(w_end && !pair && wq_count == BURSTS));
    end
end

// the preconditions of the manager's assertions are reachable
always @(posedge clk) begin
    if (!rst) begin
        AR_WAITED: cover (ar_wait && arvalid);
        AW_WAITED: cover (aw_wait && awvalid);
        W_WAITED: cover (w_wait && wvalid);
        AR_TO_4K: cover (arvalid && !crosses_4k(araddr[11:0], arlen) &&
                         crosses_4k(araddr[11:0] + 12'd4, arlen));    // ends on the boundary
        AW_TO_4K: cover (awvalid && !crosses_4k(awaddr[11:0], awlen) &&
                         crosses_4k(awaddr[11:0] + 12'd4, awlen));
        AR_AT_LIMIT: cover (reads_out == READS_MAX);
        W_PAIRED: cover (pair && awq[awq_head] != 8'd0);
        W_BEFORE_AW: cover (wq_count != 0 && awq_count == 0);
    end
end

// ---------------------------------------------------------------------------------------------
// the subordinate's obligations: asserted (SUBORDINATE = 1) or assumed (0)

// VALID_DROPPED: rvalid and bvalid held until ready
wire r_held = !r_wait || rvalid;
wire b_held = !b_wait || bvalid;
// PAYLOAD_CHANGED: the R and B payloads stable while valid waits
wire r_same = !(r_wait && rvalid) || (r_pay == r_last);
wire b_same = !(b_wait && bvalid) || (b_pay == b_last);
// EXTRA_R: an R beat only while a read is outstanding
wire r_asked = !r_fire || (reads_out != 9'd0);
// RLAST: rlast on exactly the last beat of the oldest read
wire r_last_ok = !(r_fire && reads_out != 9'd0) || (rlast == r_expect_last);
// EXTRA_B: a B only for a write burst whose AW and wlast both came earlier
wire b_asked = !b_fire || (writes_open != 9'd0 && wlast_open != 9'd0);

generate
    if (SUBORDINATE) begin : g_subordinate_asserted
        always @(posedge clk) begin
            if (!rst) begin
                R_VALID_DROPPED: assert (r_held);
                R_PAYLOAD_CHANGED: assert (r_same);
                B_VALID_DROPPED: assert (b_held);
                B_PAYLOAD_CHANGED: assert (b_same);
                R_EXTRA_R: assert (r_asked);
                R_RLAST: assert (r_last_ok);
                B_EXTRA_B: assert (b_asked);
            end
        end
    end else begin : g_subordinate_assumed
        always @(posedge clk) begin
            if (!rst) begin
                R_VALID_DROPPED: assume (r_held);
                R_PAYLOAD_CHANGED: assume (r_same);
                B_VALID_DROPPED: assume (b_held);
                B_PAYLOAD_CHANGED: assume (b_same);
                R_EXTRA_R: assume (r_asked);
                R_RLAST: assume (r_last_ok);
                B_EXTRA_B: assume (b_asked);
            end
        end
    end
endgenerate

endmodule

`default_nettype wire
`endif
