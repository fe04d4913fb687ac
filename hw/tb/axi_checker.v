`default_nettype none
`include "chip_defs.vh"
// axi_checker: a passive AXI4 protocol checker, on the chip's port in every simulation
// (chip_harness.v, replay_tb.v) and on the broken managers of its own block test.
//
// The rules (model.chip.rtl_defs.AxiRule; hw/ISA.md, "The AXI4 manager port"), each checked every
// cycle after reset, cycle 0 being the first:
//   VALID_DROPPED      a valid (any channel) fell before its ready
//   PAYLOAD_CHANGED    a channel's payload changed while its valid waited for ready
//   BURST_SHAPE        an AR or AW that is not INCR with 4-byte beats at an aligned address
//   CROSSES_4K         an AR or AW burst crosses a 4 KB boundary (lengths 1 .. 256: the field)
//   WLAST              a write burst's beats up to its wlast (or 257 beats without one) differ
//                      from its AW's length; W bursts pair with AWs in order
//   EXTRA_B            a B with no write burst (AW and wlast both earlier) left to answer
//   RLAST              rlast not on exactly the last beat of the oldest read burst
//   EXTRA_R            an R beat with no read outstanding
//   READS_OUTSTANDING  an AR handshake while READS_MAX reads are outstanding
// It keeps the first violation (first_cycle, first_channel, first_rule: AxiChannel and AxiRule
// codes, 0 while there is none) and counts the cycles with one (violations), readable after
// done; it $displays the first. Several in one cycle: the first in the order above, channel by
// channel (AR, R, AW, W, B).
module axi_checker #(
    parameter READS_MAX = `AXI_READS_MAX,    // the manager's declared reads outstanding
    parameter DEPTH     = 256                // bursts tracked per queue (reads, AWs, W bursts)
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

    output reg  [31:0] first_cycle,
    output reg  [2:0]  first_channel,
    output reg  [3:0]  first_rule,
    output reg  [31:0] violations
);

localparam QW = $clog2(DEPTH);

initial begin
    `CHECK_RANGE("READS_MAX", READS_MAX, 1, DEPTH)
end

reg [31:0] cycle;

// ---------------------------------------------------------------------------------------------
// valid held until ready with a stable payload: what each channel showed last cycle

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

function [3:0] hold_rule;
    input waited;
    input valid;
    input same;
    begin
        hold_rule = !waited ? `AXI_RULE_NONE :
                    !valid  ? `AXI_RULE_VALID_DROPPED :
                    !same   ? `AXI_RULE_PAYLOAD_CHANGED : `AXI_RULE_NONE;
    end
endfunction

// an address burst: INCR, 4-byte beats, aligned, within its 4 KB page
function [3:0] burst_rule;
    input [11:0] addr;    // the burst's offset in its 4 KB page
    input [7:0]  len;
    input [2:0]  size;
    input [1:0]  burst;
    begin
        burst_rule = (size != 3'd2 || burst != 2'b01 || addr[1:0] != 2'b00) ?
                         `AXI_RULE_BURST_SHAPE :
                     (({1'b0, addr} + {3'd0, len, 2'b00} + 13'd4) > 13'h1000) ?
                         `AXI_RULE_CROSSES_4K : `AXI_RULE_NONE;
    end
endfunction

// ---------------------------------------------------------------------------------------------
// bursts in flight

wire ar_fire = arvalid && arready;
wire r_fire  = rvalid && rready;
wire aw_fire = awvalid && awready;
wire w_fire  = wvalid && wready;
wire b_fire  = bvalid && bready;

reg [7:0]  rq [0:DEPTH-1];      // arlen of each outstanding read, oldest first
reg [QW:0] rq_head, rq_tail;
reg [8:0]  r_beat;
reg [8:0]  reads_out;
reg [7:0]  awq [0:DEPTH-1];     // awlen of each AW not yet paired with its W burst
reg [QW:0] awq_head, awq_tail;
reg [8:0]  wq [0:DEPTH-1];      // beats of each W burst (ended by wlast) not yet paired
reg [QW:0] wq_head, wq_tail;
reg [8:0]  w_beats;             // beats of the W burst in progress
reg [31:0] n_aw, n_wlast, n_b;

wire        r_expect_last = (r_beat[7:0] == rq[rq_head[QW-1:0]]);
wire        pair          = (awq_head != awq_tail) && (wq_head != wq_tail);
wire        pair_bad      = pair && ({1'b0, awq[awq_head[QW-1:0]]} + 9'd1 != wq[wq_head[QW-1:0]]);
wire        w_runaway     = w_fire && !wlast && (w_beats == 9'd255);    // a 257th beat next

// the violations of this cycle, channel by channel
wire [3:0] ar_rule = (hold_rule(ar_wait, arvalid, ar_pay == ar_last) != `AXI_RULE_NONE) ?
                         hold_rule(ar_wait, arvalid, ar_pay == ar_last) :
                     !ar_fire ? `AXI_RULE_NONE :
                     (burst_rule(araddr[11:0], arlen, arsize, arburst) != `AXI_RULE_NONE) ?
                         burst_rule(araddr[11:0], arlen, arsize, arburst) :
                     (reads_out >= READS_MAX[8:0]) ? `AXI_RULE_READS_OUTSTANDING :
                                                     `AXI_RULE_NONE;
wire [3:0] r_rule  = (hold_rule(r_wait, rvalid, r_pay == r_last) != `AXI_RULE_NONE) ?
                         hold_rule(r_wait, rvalid, r_pay == r_last) :
                     !r_fire ? `AXI_RULE_NONE :
                     (reads_out == 9'd0) ? `AXI_RULE_EXTRA_R :
                     (rlast != r_expect_last) ? `AXI_RULE_RLAST : `AXI_RULE_NONE;
wire [3:0] aw_rule = (hold_rule(aw_wait, awvalid, aw_pay == aw_last) != `AXI_RULE_NONE) ?
                         hold_rule(aw_wait, awvalid, aw_pay == aw_last) :
                     !aw_fire ? `AXI_RULE_NONE : burst_rule(awaddr[11:0], awlen, awsize, awburst);
wire [3:0] w_rule  = (hold_rule(w_wait, wvalid, w_pay == w_last) != `AXI_RULE_NONE) ?
                         hold_rule(w_wait, wvalid, w_pay == w_last) :
                     (pair_bad || w_runaway) ? `AXI_RULE_WLAST : `AXI_RULE_NONE;
wire [3:0] b_rule  = (hold_rule(b_wait, bvalid, b_pay == b_last) != `AXI_RULE_NONE) ?
                         hold_rule(b_wait, bvalid, b_pay == b_last) :
                     (b_fire && (n_b >= n_aw || n_b >= n_wlast)) ? `AXI_RULE_EXTRA_B :
                                                                   `AXI_RULE_NONE;

wire [2:0] channel = (ar_rule != `AXI_RULE_NONE) ? `AXI_CH_AR :
                     (r_rule != `AXI_RULE_NONE)  ? `AXI_CH_R  :
                     (aw_rule != `AXI_RULE_NONE) ? `AXI_CH_AW :
                     (w_rule != `AXI_RULE_NONE)  ? `AXI_CH_W  :
                     (b_rule != `AXI_RULE_NONE)  ? `AXI_CH_B  : 3'd0;
wire [3:0] rule    = (ar_rule != `AXI_RULE_NONE) ? ar_rule :
                     (r_rule != `AXI_RULE_NONE)  ? r_rule  :
                     (aw_rule != `AXI_RULE_NONE) ? aw_rule :
                     (w_rule != `AXI_RULE_NONE)  ? w_rule  : b_rule;

// A cycle with no valid, no valid waiting and no burst pair to match breaks no rule and moves no
// queue: the checker only counts it (on Icarus every signal a block tests costs, and the chip
// computes between its bursts).
wire active = arvalid || rvalid || awvalid || wvalid || bvalid ||
              ar_wait || r_wait || aw_wait || w_wait || b_wait || pair;

always @(posedge clk) begin
    if (rst) begin
        cycle         <= 32'd0;
        first_cycle   <= 32'd0;
        first_channel <= 3'd0;
        first_rule    <= `AXI_RULE_NONE;
        violations    <= 32'd0;
        ar_wait <= 1'b0;
        aw_wait <= 1'b0;
        w_wait  <= 1'b0;
        r_wait  <= 1'b0;
        b_wait  <= 1'b0;
        rq_head  <= {(QW+1){1'b0}};
        rq_tail  <= {(QW+1){1'b0}};
        r_beat   <= 9'd0;
        reads_out <= 9'd0;
        awq_head <= {(QW+1){1'b0}};
        awq_tail <= {(QW+1){1'b0}};
        wq_head  <= {(QW+1){1'b0}};
        wq_tail  <= {(QW+1){1'b0}};
        w_beats  <= 9'd0;
        n_aw     <= 32'd0;
        n_wlast  <= 32'd0;
        n_b      <= 32'd0;
    end else begin
        cycle <= cycle + 32'd1;
        if (active) begin
            if (rule != `AXI_RULE_NONE) begin
                if (violations == 32'd0) begin
                    first_cycle   <= cycle;
                    first_channel <= channel;
                    first_rule    <= rule;
                    $display("axi_checker %m: cycle %0d: channel %0d, rule %0d (model.chip.rtl_defs.AxiChannel, AxiRule)",
                             cycle, channel, rule);
                end
                violations <= violations + 32'd1;
            end
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
                rq[rq_tail[QW-1:0]] <= arlen;
                rq_tail <= rq_tail + 1'b1;
            end
            if (r_fire && reads_out != 9'd0) begin
                r_beat <= (rlast || r_expect_last) ? 9'd0 : r_beat + 9'd1;
                if (rlast || r_expect_last) begin
                    rq_head <= rq_head + 1'b1;
                end
            end
            reads_out <= reads_out + {8'd0, ar_fire} -
                         {8'd0, r_fire && reads_out != 9'd0 && (rlast || r_expect_last)};
            // writes: AWs and W bursts pair in order
            if (aw_fire) begin
                awq[awq_tail[QW-1:0]] <= awlen;
                awq_tail <= awq_tail + 1'b1;
                n_aw     <= n_aw + 32'd1;
            end
            if (w_fire) begin
                if (wlast || w_runaway) begin
                    wq[wq_tail[QW-1:0]] <= w_beats + 9'd1;
                    wq_tail <= wq_tail + 1'b1;
                    w_beats <= 9'd0;
                    n_wlast <= n_wlast + 32'd1;
                end else begin
                    w_beats <= w_beats + 9'd1;
                end
            end
            if (pair) begin
                awq_head <= awq_head + 1'b1;
                wq_head  <= wq_head + 1'b1;
            end
            if (b_fire) begin
                n_b <= n_b + 32'd1;
            end
        end
    end
end

// the data and the response codes are the memory's and the chip's business, not the protocol's
wire unused_axi_checker = &{1'b0, rdata[0], rresp[0]};

endmodule

`default_nettype wire
