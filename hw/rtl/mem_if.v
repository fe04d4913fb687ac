`default_nettype none
`include "chip_defs.vh"
// mem_if: the memory interface unit, the one module that speaks AXI4 (hw/ISA.md, "The AXI4
// manager port" and "The memory interface unit").
//
// Unit side (the controller's fetch, the DMA, the paged DMA), in *advancing* cycles: a cycle with
// `stall` high is frozen, and none of the unit-side inputs below takes effect in it (the units
// hold their state, so they present the same inputs again in the next cycle).
//   read stream   rd_cmd with rd_addr (word address) and rd_len (1 .. 65535 words): word i is
//                 delivered (rd_valid, rd_data) in its due cycle D + i, where
//                 D = max(c + EXT_LAT + 2, the previous stream's last due cycle + 1), c the
//                 command's cycle: the ideal memory's schedule. A unit commands a stream no
//                 earlier than EXT_LAT + 2 cycles before the previous one's last word is due
//                 (the units stream back to back, never further ahead): so at most
//                 EXT_LAT + 3 streams have words to come, which READS_MAX bursts cover, and a
//                 full command queue always drains
//   write stream  wr_cmd with wr_addr and wr_len, then wr_push with wr_data once per word (the
//                 first push may be in the command's cycle)
//   fence         fence, in the cycle of the stream's last push: fence_done is high in the cycle
//                 3 later, when every write so far has its B response
//   bus_err       sticky from `clear` (a run's start): an R beat or a B came back SLVERR/DECERR
//
// The ideal schedule is a model inside the unit: a delay line of EXT_LAT + 1 stages carries
// each read stream's length to a counter of words due, a 2-stage one carries fences. `stall`
// is high in a cycle when that schedule needs what the memory has not given yet: a word is due
// and the read buffer is empty, a fence is due and a write is unacknowledged, or a command or
// a push finds its queue full. So the units see the ideal memory in advancing cycles whatever
// the memory does (hw/ISA.md, "Exact by construction").
//
// AXI side, every cycle (frozen or not): streams are cut into INCR bursts of at most 256 beats
// that never cross a 4 KB boundary (1024 words), one AR and one AW a cycle from registers held
// until ready; up to READS_MAX reads outstanding (counted from the AR's issue to its last R
// beat); R beats go into the read buffer (rready while it has room); W beats leave from the
// write buffer in order, wlast on each burst's last; bready is always 1.
module mem_if #(
    parameter EXT_LAT   = `EXT_LAT_DEFAULT,    // the ideal memory's read latency (hw/ISA.md)
    parameter READS_MAX = `AXI_READS_MAX,      // read bursts outstanding, at most
    parameter RBUF      = 8,                   // read buffer words
    parameter WBUF      = 8                    // write buffer words
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,        // a run starts: bus_err falls

    // unit side
    output wire        stall,
    output wire        bus_err,
    input  wire        rd_cmd,
    input  wire [15:0] rd_addr,
    input  wire [15:0] rd_len,
    output wire        rd_valid,
    output wire [31:0] rd_data,
    input  wire        wr_cmd,
    input  wire [15:0] wr_addr,
    input  wire [15:0] wr_len,
    input  wire        wr_push,
    input  wire [31:0] wr_data,
    input  wire        fence,
    output wire        fence_done,

    // AXI4 manager
    output wire [0:0]  m_axi_arid,
    output wire [31:0] m_axi_araddr,
    output wire [7:0]  m_axi_arlen,
    output wire [2:0]  m_axi_arsize,
    output wire [1:0]  m_axi_arburst,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [0:0]  m_axi_rid,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rlast,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready,
    output wire [0:0]  m_axi_awid,
    output wire [31:0] m_axi_awaddr,
    output wire [7:0]  m_axi_awlen,
    output wire [2:0]  m_axi_awsize,
    output wire [1:0]  m_axi_awburst,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wlast,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [0:0]  m_axi_bid,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready
);

localparam CMDQ    = 4;                 // stream commands waiting to be cut into bursts
localparam STAGES  = EXT_LAT + 1;       // the read schedule's delay line
localparam RB_AW   = $clog2(RBUF);
localparam WB_AW   = $clog2(WBUF);

initial begin
    `CHECK_RANGE("EXT_LAT", EXT_LAT, `EXT_LAT_LO, `EXT_LAT_HI)
    // the ideal schedule streams one-word bursts a cycle: L + 2 of them are outstanding
    `CHECK_RANGE("READS_MAX", READS_MAX, EXT_LAT + 2, `AXI_READS_MAX)
    `CHECK_RANGE("RBUF", RBUF, 2, 256)
    `CHECK_RANGE("WBUF", WBUF, 2, 256)
    if ((RBUF & (RBUF - 1)) != 0 || (WBUF & (WBUF - 1)) != 0) begin
        $display("%m: RBUF = %0d and WBUF = %0d must be powers of two", RBUF, WBUF);
        $finish;
    end
end

// ---------------------------------------------------------------------------------------------
// the ideal schedule and the stall

reg [16*STAGES-1:0] due_pipe;    // stage s: the length of the read stream commanded s+1 cycles ago
reg [31:0]          due_reg;     // words due and not yet delivered
reg [1:0]           fence_pipe;
reg                 fence_reg;   // a fence is due
reg                 err_reg;

reg [RB_AW:0]  rb_count;
reg [WB_AW:0]  wb_count;
reg [2:0]      rq_count, wq_count;
reg [16:0]     ar_left, aw_left;    // words of the current stream not yet in a burst
reg [8:0]      reads_out;           // AR issued, last R beat not received
reg [8:0]      writes_out;          // AW issued, B not received

wire due        = (due_reg != 32'd0);
wire rb_empty   = (rb_count == {(RB_AW+1){1'b0}});
wire wb_full    = (wb_count == WBUF[WB_AW:0]);
wire write_idle = (writes_out == 9'd0) && (aw_left == 17'd0) && (wq_count == 3'd0);

assign stall = (due && rb_empty) || (fence_reg && !write_idle) || (wr_push && wb_full) ||
               (rd_cmd && (rq_count == CMDQ[2:0])) || (wr_cmd && (wq_count == CMDQ[2:0]));

wire advance  = !stall;
wire rd_take  = rd_cmd && advance;
wire wr_take  = wr_cmd && advance;
wire push     = wr_push && advance;
wire deliver  = due && !rb_empty && advance;

assign rd_valid   = deliver;
assign fence_done = fence_reg && write_idle && advance;
assign bus_err    = err_reg;

// (the schedule, the read buffer and the write buffer are enabled only in the cycles in which
// something they keep can change: the port is idle most cycles, and on Icarus every statement a
// block runs costs; the enables are exact: every register ends each cycle as it would without)
wire schedule_busy = rd_take || (due_pipe != {(16*STAGES){1'b0}}) || due || fence ||
                     (fence_pipe != 2'd0) || fence_reg;

always @(posedge clk) begin
    if (rst) begin
        due_pipe   <= {(16*STAGES){1'b0}};
        due_reg    <= 32'd0;
        fence_pipe <= 2'd0;
        fence_reg  <= 1'b0;
    end else if (advance && schedule_busy) begin
        due_pipe   <= {due_pipe[16*STAGES-17:0], rd_take ? rd_len : 16'd0};
        due_reg    <= due_reg - {31'd0, deliver} + {16'd0, due_pipe[16*STAGES-1 -: 16]};
        fence_pipe <= {fence_pipe[0], fence};
        fence_reg  <= fence_pipe[1] || (fence_reg && !write_idle);
    end
end

// ---------------------------------------------------------------------------------------------
// a burst of a stream: at most 256 words, not past the next 4 KB boundary (1024 words)

function [8:0] burst_len;
    input [9:0]  addr;    // the offset of the burst's first word in its 4 KB page
    input [16:0] left;
    reg   [10:0] to_boundary;
    begin
        to_boundary = 11'd1024 - {1'b0, addr};
        burst_len = 9'd256;
        if ({6'd0, to_boundary} < {8'd0, burst_len}) begin
            burst_len = to_boundary[8:0];
        end
        if (left < {8'd0, burst_len}) begin
            burst_len = left[8:0];
        end
    end
endfunction

// ---------------------------------------------------------------------------------------------
// reads: command queue, AR, read buffer

reg [31:0] rq_mem [0:CMDQ-1];    // {addr, len}
reg [1:0]  rq_head, rq_tail;
reg [15:0] ar_addr;              // the current stream's next word
reg        arvalid_reg;
reg [31:0] araddr_reg;
reg [7:0]  arlen_reg;

wire        ar_cur     = (ar_left != 17'd0);
wire        rq_any     = (rq_count != 3'd0);
wire        ar_new     = !ar_cur && (rq_any || rd_take);     // a stream becomes the current one
wire [31:0] rq_first   = rq_mem[rq_head];
wire [15:0] ar_src_addr = ar_cur ? ar_addr : (rq_any ? rq_first[31:16] : rd_addr);
wire [16:0] ar_src_left = ar_cur ? ar_left : {1'b0, rq_any ? rq_first[15:0] : rd_len};
wire [8:0]  ar_blen    = burst_len(ar_src_addr[9:0], ar_src_left);
wire        ar_slot    = !arvalid_reg || m_axi_arready;
wire        ar_issue   = ar_slot && (ar_cur || ar_new) && (reads_out < READS_MAX[8:0]);
wire        rq_push    = rd_take && (ar_cur || rq_any);
wire        rq_pop     = ar_new && rq_any;
wire        r_fire     = m_axi_rvalid && m_axi_rready;
wire        r_done     = r_fire && m_axi_rlast;

always @(posedge clk) begin
    if (rst) begin
        rq_head     <= 2'd0;
        rq_tail     <= 2'd0;
        rq_count    <= 3'd0;
        ar_addr     <= 16'd0;
        ar_left     <= 17'd0;
        arvalid_reg <= 1'b0;
        araddr_reg  <= 32'd0;
        arlen_reg   <= 8'd0;
        reads_out   <= 9'd0;
    end else begin
        if (rq_push) begin
            rq_mem[rq_tail] <= {rd_addr, rd_len};
            rq_tail <= rq_tail + 2'd1;
        end
        if (rq_pop) begin
            rq_head <= rq_head + 2'd1;
        end
        rq_count <= rq_count + {2'd0, rq_push} - {2'd0, rq_pop};
        if (ar_issue) begin
            arvalid_reg <= 1'b1;
            araddr_reg  <= {14'd0, ar_src_addr, 2'b00};
            arlen_reg   <= ar_blen[7:0] - 8'd1;
            ar_addr     <= ar_src_addr + {7'd0, ar_blen};
            ar_left     <= ar_src_left - {8'd0, ar_blen};
        end else begin
            if (m_axi_arready) begin
                arvalid_reg <= 1'b0;
            end
            if (ar_new) begin
                ar_addr <= ar_src_addr;
                ar_left <= ar_src_left;
            end
        end
        reads_out <= reads_out + {8'd0, ar_issue} - {8'd0, r_done};
    end
end

reg [31:0]    rb_mem [0:RBUF-1];
reg [RB_AW-1:0] rb_head, rb_tail;

assign m_axi_rready = (rb_count != RBUF[RB_AW:0]);
assign rd_data      = rb_mem[rb_head];

always @(posedge clk) begin
    if (rst) begin
        rb_head  <= {RB_AW{1'b0}};
        rb_tail  <= {RB_AW{1'b0}};
        rb_count <= {(RB_AW+1){1'b0}};
    end else if (r_fire || deliver) begin
        if (r_fire) begin
            rb_mem[rb_tail] <= m_axi_rresp[1] ? 32'd0 : m_axi_rdata;    // an error carries 0
            rb_tail <= rb_tail + 1'b1;
        end
        if (deliver) begin
            rb_head <= rb_head + 1'b1;
        end
        rb_count <= rb_count + {{RB_AW{1'b0}}, r_fire} - {{RB_AW{1'b0}}, deliver};
    end
end

// ---------------------------------------------------------------------------------------------
// writes: command queue, AW, the bursts' lengths for W, write buffer, B

reg [31:0] wq_mem [0:CMDQ-1];
reg [1:0]  wq_head, wq_tail;
reg [15:0] aw_addr;
reg        awvalid_reg;
reg [31:0] awaddr_reg;
reg [7:0]  awlen_reg;
reg [7:0]  wl_mem [0:CMDQ-1];    // awlen of each burst whose W beats have not all left
reg [1:0]  wl_head, wl_tail;
reg [2:0]  wl_count;
reg [7:0]  w_beat;               // beats of the current W burst already sent

wire        aw_cur      = (aw_left != 17'd0);
wire        wq_any      = (wq_count != 3'd0);
wire        aw_new      = !aw_cur && (wq_any || wr_take);
wire [31:0] wq_first    = wq_mem[wq_head];
wire [15:0] aw_src_addr = aw_cur ? aw_addr : (wq_any ? wq_first[31:16] : wr_addr);
wire [16:0] aw_src_left = aw_cur ? aw_left : {1'b0, wq_any ? wq_first[15:0] : wr_len};
wire [8:0]  aw_blen     = burst_len(aw_src_addr[9:0], aw_src_left);
wire        aw_slot     = !awvalid_reg || m_axi_awready;
wire        aw_issue    = aw_slot && (aw_cur || aw_new) && (wl_count != CMDQ[2:0]) &&
                          (writes_out != 9'h1FF);
wire        wq_push     = wr_take && (aw_cur || wq_any);
wire        wq_pop      = aw_new && wq_any;
wire        w_fire      = m_axi_wvalid && m_axi_wready;
wire        w_end       = w_fire && m_axi_wlast;
wire        b_fire      = m_axi_bvalid;    // bready is always 1

always @(posedge clk) begin
    if (rst) begin
        wq_head     <= 2'd0;
        wq_tail     <= 2'd0;
        wq_count    <= 3'd0;
        aw_addr     <= 16'd0;
        aw_left     <= 17'd0;
        awvalid_reg <= 1'b0;
        awaddr_reg  <= 32'd0;
        awlen_reg   <= 8'd0;
        wl_head     <= 2'd0;
        wl_tail     <= 2'd0;
        wl_count    <= 3'd0;
        w_beat      <= 8'd0;
        writes_out  <= 9'd0;
    end else begin
        if (wq_push) begin
            wq_mem[wq_tail] <= {wr_addr, wr_len};
            wq_tail <= wq_tail + 2'd1;
        end
        if (wq_pop) begin
            wq_head <= wq_head + 2'd1;
        end
        wq_count <= wq_count + {2'd0, wq_push} - {2'd0, wq_pop};
        if (aw_issue) begin
            awvalid_reg <= 1'b1;
            awaddr_reg  <= {14'd0, aw_src_addr, 2'b00};
            awlen_reg   <= aw_blen[7:0] - 8'd1;
            aw_addr     <= aw_src_addr + {7'd0, aw_blen};
            aw_left     <= aw_src_left - {8'd0, aw_blen};
            wl_mem[wl_tail] <= aw_blen[7:0] - 8'd1;
            wl_tail     <= wl_tail + 2'd1;
        end else begin
            if (m_axi_awready) begin
                awvalid_reg <= 1'b0;
            end
            if (aw_new) begin
                aw_addr <= aw_src_addr;
                aw_left <= aw_src_left;
            end
        end
        if (w_end) begin
            wl_head <= wl_head + 2'd1;
        end
        wl_count <= wl_count + {2'd0, aw_issue} - {2'd0, w_end};
        if (w_fire) begin
            w_beat <= m_axi_wlast ? 8'd0 : w_beat + 8'd1;
        end
        writes_out <= writes_out + {8'd0, aw_issue} - {8'd0, b_fire};
    end
end

reg [31:0]      wb_mem [0:WBUF-1];
reg [WB_AW-1:0] wb_head, wb_tail;

always @(posedge clk) begin
    if (rst) begin
        wb_head  <= {WB_AW{1'b0}};
        wb_tail  <= {WB_AW{1'b0}};
        wb_count <= {(WB_AW+1){1'b0}};
    end else if (push || w_fire) begin
        if (push) begin
            wb_mem[wb_tail] <= wr_data;
            wb_tail <= wb_tail + 1'b1;
        end
        if (w_fire) begin
            wb_head <= wb_head + 1'b1;
        end
        wb_count <= wb_count + {{WB_AW{1'b0}}, push} - {{WB_AW{1'b0}}, w_fire};
    end
end

// the sticky bus error: an R beat or a B with SLVERR (2) or DECERR (3)
always @(posedge clk) begin
    if (rst || clear) begin
        err_reg <= 1'b0;
    end else if ((r_fire && m_axi_rresp[1]) || (b_fire && m_axi_bresp[1])) begin
        err_reg <= 1'b1;
    end
end

// ---------------------------------------------------------------------------------------------
// the AXI outputs

assign m_axi_arid    = 1'b0;
assign m_axi_araddr  = araddr_reg;
assign m_axi_arlen   = arlen_reg;
assign m_axi_arsize  = 3'd2;
assign m_axi_arburst = 2'b01;
assign m_axi_arvalid = arvalid_reg;
assign m_axi_awid    = 1'b0;
assign m_axi_awaddr  = awaddr_reg;
assign m_axi_awlen   = awlen_reg;
assign m_axi_awsize  = 3'd2;
assign m_axi_awburst = 2'b01;
assign m_axi_awvalid = awvalid_reg;
assign m_axi_wdata   = wb_mem[wb_head];
assign m_axi_wstrb   = 4'hF;
assign m_axi_wlast   = (w_beat == wl_mem[wl_head]);
assign m_axi_wvalid  = (wb_count != {(WB_AW+1){1'b0}}) && (wl_count != 3'd0);
assign m_axi_bready  = 1'b1;

// one ID: responses come back in order and their IDs are not needed; an error beat's data is
// replaced by 0, not read
wire unused_mem_if = &{1'b0, m_axi_rid, m_axi_bid, m_axi_bresp[0], m_axi_rresp[0]};

endmodule

`default_nettype wire
